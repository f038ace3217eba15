import Foundation
import Hummingbird
import Logging
import NIOCore
import TransparencyLog

/// `ledger witness serve`: a C2SP `tlog-witness` v1 witness for the logs it is given, at
/// `POST /add-checkpoint` (and `GET /health`). It answers 200 with its cosignature line, or the
/// specification's refusals: 400 malformed or old size past the checkpoint, 403 no trusted
/// signature, 404 unknown log, 409 with its size (`text/x.tlog.size`), 422 a proof that does not
/// verify or another root at its size.
public enum WitnessServer {
    public static func application(
        state: WitnessState, host: String, port: Int, logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        router.get("health") { _, _ in "ok\n" }
        router.post("add-checkpoint") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 128 * 1024)
            do {
                let line = try await state.add(try AddCheckpoint(body: String(buffer: body)))
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: line)))
            } catch let refusal as AddCheckpoint.Refusal {
                logger.info("witness: refused", metadata: ["status": "\(refusal.status)", "why": "\(refusal.message.prefix(200))"])
                let type = refusal.status == 409 ? "text/x.tlog.size" : "text/plain; charset=utf-8"
                let text = refusal.status == 409 ? refusal.message : refusal.message + "\n"
                return Response(
                    status: .init(code: refusal.status), headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
            }
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { await onRunning($0.localAddress?.port ?? port) }, logger: logger)
    }
}

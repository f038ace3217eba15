/// What a new connection to a server, outside any pool, found: it `answers` (a working
/// connection), the server `refuses` it (an error, whatever its SQLSTATE: too many connections, no
/// CONNECT, a database gone or not accepting, a login refused, a server still starting), or it
/// stays `silent` past its deadline (a hung server, or a machine too loaded to tell).
public enum Reach: Sendable, Equatable {
    case answers, refuses, silent
}

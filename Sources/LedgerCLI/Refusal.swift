/// A command's refusal to go on, said in a sentence or two with what to do, without the usage
/// text a `ValidationError` adds (which is about the command line).
struct Refusal: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension Duration {
    /// The duration in seconds, for settings, SQL intervals and rates.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

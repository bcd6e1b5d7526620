extension Duration {
    /// The duration in seconds, as a `Double` (what timings are printed and compared in):
    /// the one conversion of the library and the CLI.
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

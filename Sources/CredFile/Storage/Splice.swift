/// A file's new content as pieces: stretches of the file as it was read, and new bytes.
/// The parser emits it (``CredentialFile/writeRendered(applying:to:)``) and the writer
/// consumes it (``AtomicWriter/rewriteSplicing(createIfMissing:mapping:content:)``);
/// neither knows the other.
enum Splice {
    /// One piece of new content.
    enum Piece {
        /// The bytes at these offsets of the file as read: copied by the kernel from the
        /// file itself when it can (`copy_file_range`), without passing through memory.
        case original(Range<Int>)
        /// New bytes.
        case new(ArraySlice<UInt8>)
    }

    /// New content handed to the writer piece by piece (each piece to `sink`, in order),
    /// so it never has to be built whole in memory: a one-line change of a large file
    /// is written as the stretches of the file around the new line, and the new line.
    typealias Content = (_ sink: (Piece) throws -> Void) throws -> Void
}

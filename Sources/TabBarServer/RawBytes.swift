import TabBarCore

/// The journal lines of a group commit (StateStore): a `ByteBuffer` with room for the group header.
typealias RawBytes = ByteBuffer

/// Where a stream of TLS records stands: each is a 5-byte header whose last two bytes are the
/// length of the fragment that follows (RFC 8446 section 5.1; TLS 1.2's are laid out alike).
///
/// ``CiphertextBIO`` hands OpenSSL one record per read with it. OpenSSL reads ahead (asks for as
/// much as its buffer holds, so a record costs it one read, not a header's and then a
/// fragment's); but when a record starts with more bytes behind it in the buffer, OpenSSL moves
/// them all to align the record's payload, so given several records at once it would copy the
/// later ones over and over.
struct TLSRecordBoundary {
    /// How many bytes of the current record's header have passed (0 to 5).
    private var headerPassed = 0
    /// The fragment's length, as far as its header has passed.
    private var length = 0
    /// How many bytes of the current record's fragment are still to pass, once its header has.
    private var fragmentLeft = 0

    /// Whether the next byte begins a record.
    var atRecordStart: Bool { headerPassed == 0 }

    /// How many of `bytes` (the next ones of the stream) belong to the current record: all of them,
    /// or up to the end of the record, after which the next one begins. Those bytes count as passed.
    mutating func pass(_ bytes: UnsafeRawBufferPointer) -> Int {
        var passed = 0
        while passed < bytes.count {
            if headerPassed < 5 {
                switch headerPassed {
                case 3: length = Int(bytes[passed]) << 8
                case 4: length |= Int(bytes[passed])
                default: break
                }
                headerPassed += 1
                passed += 1
                guard headerPassed == 5 else { continue }
                fragmentLeft = length
            } else {
                let count = min(fragmentLeft, bytes.count - passed)
                fragmentLeft -= count
                passed += count
            }
            if fragmentLeft == 0 {
                headerPassed = 0
                return passed
            }
        }
        return passed
    }
}

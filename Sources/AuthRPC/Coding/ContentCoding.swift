internal import CZlib

/// The content codings gRPC uses for messages (`grpc-encoding`), done with zlib.
enum ContentCoding: String, Sendable, CaseIterable {
    /// RFC 1952 gzip.
    case gzip
    /// RFC 1950 zlib-wrapped deflate (what HTTP and gRPC call "deflate").
    case deflate

    /// Why a decode failed.
    enum Failure: Error, Equatable {
        /// The output would exceed the caller's limit (a decompression bomb, or just too big).
        case tooLarge(limit: Int)
        /// The input is not valid for this coding.
        case corrupt(String)
    }

    private var windowBits: Int32 { self == .gzip ? 15 + 16 : 15 }

    /// Compresses `bytes` (default level).
    func compress(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard czlib_deflate_init2(&stream, Z_DEFAULT_COMPRESSION, windowBits) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer -> Int in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                // deflateBound guarantees one Z_FINISH call completes.
                _ = CZlib.deflate(&stream, Z_FINISH)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        output.removeLast(output.count - produced)
        return output
    }

    /// Decompresses `bytes`, failing once the output would pass `limit` bytes (so a hostile
    /// message cannot make the client allocate without bound).
    func decompress(_ bytes: ArraySlice<UInt8>, limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        guard czlib_inflate_init2(&stream, windowBits) == Z_OK else { throw .corrupt("zlib could not start") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = Array(bytes)
        let outcome: Result<Void, Failure> = input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { outBuffer -> (Int32, Int) in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, outBuffer.count - Int(stream.avail_out))
                }
                if output.count + produced > limit { return .failure(.tooLarge(limit: limit)) }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    return .success(())
                case Z_OK:
                    continue
                default:
                    // Z_BUF_ERROR here means the input ended before the compressed stream did.
                    let reason = stream.msg.map { String(cString: $0) } ?? "truncated or invalid \(rawValue) data"
                    return .failure(.corrupt(reason))
                }
            }
        }
        try outcome.get()
        return output
    }
}

import AuthRPCSyntax
import AuthRPCSystem
import AuthRPCTransport
import AuthSampleService
import Foundation

@testable import AuthRPC

/// `ResponseDecoder.decode`: a complete HTTP/2 response as a unary call's result: status,
/// content-type, `grpc-status`, `grpc-message`, metadata and `-bin` values,
/// `grpc-status-details-bin`, framing, `grpc-encoding` and decompression under the size limit.
///
/// Input: a status line (`200`, or `200!` for a Trailers-Only response), header lines, an empty
/// line, trailer lines, an empty line, then the body bytes.
enum GRPCResponseTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let response = parse(bytes)
        try check(response, RawBytesCodec(), limit: 4 << 20)
        try check(response, ProtobufDeserializer<Grpc_Testing_SimpleResponse>(), limit: 1024)
    }

    static func parse(_ bytes: [UInt8]) -> HTTP2Response {
        var input = FuzzInput(bytes)
        let statusLine = input.line()
        let trailersOnly = statusLine.last == UInt8(ascii: "!")
        let status = Int(String(decoding: statusLine.prefix { $0 != UInt8(ascii: "!") }, as: UTF8.self)) ?? 0
        let headers = FuzzInput.fields(input.lines()).map { HTTP2HeaderField(name: $0.name, value: $0.value) }
        let trailers = FuzzInput.fields(input.lines()).map { HTTP2HeaderField(name: $0.name, value: $0.value) }
        let body = Array(input.rest())
        if trailersOnly {
            // What HTTP2Stream assembles for a single header block with END_STREAM.
            return HTTP2Response(status: status, headers: headers, body: [], trailers: [], endedWithHeaders: true)
        }
        return HTTP2Response(status: status, headers: headers, body: body, trailers: trailers, endedWithHeaders: false)
    }

    private static func check<D: MessageDeserializer>(
        _ response: HTTP2Response,
        _ deserializer: D,
        limit: Int
    ) throws(OracleViolation) where D.Message: Sendable {
        // The metadata as the eager decoder builds it, pair by pair: what the shared storage the
        // decoder keeps (Metadata.Storage.received) must read as.
        func eager(_ fields: [HTTP2HeaderField]) -> Metadata {
            Metadata(receivedFields: fields.lazy.map { (name: $0.name, value: $0.value) })
        }
        let block = response.endedWithHeaders ? response.headers : response.trailers
        let trailers = eager(block)
        let headers = response.endedWithHeaders ? Metadata() : eager(response.headers)
        let statusFields = trailers.strings(forKey: "grpc-status")
        switch ResponseDecoder.decode(response, deserializer: deserializer, maxMessageBytes: limit) {
        case .success(let unary):
            try require(
                statusFields.first.flatMap(StatusCode.init(grpcStatus:)) == .ok,
                "a response without grpc-status 0 decoded as OK"
            )
            try require(
                response.headers.first { $0.name == "content-type" }.map { $0.value.hasPrefix("application/grpc") }
                    ?? true,
                "a response with a non-gRPC content-type decoded as OK"
            )
            if let raw = unary.message as? [UInt8] {
                try require(raw.count <= limit, "an OK message of \(raw.count) bytes passed the limit of \(limit)")
            }
            try require(
                unary.headers == headers && unary.trailers == trailers
                    && Array(unary.trailers).elementsEqual(trailers, by: { $0.key == $1.key && $0.value == $1.value })
                    && unary.headers.description == headers.description
                    && unary.trailers.hashValue == trailers.hashValue,
                "the response's metadata reads differently from the pairs it was received as"
            )
            _ = unary.headers.description + unary.trailers.description
        case .failure(let error):
            try require(error.code != .ok, "a failure carried status OK")
            _ = error.description
            _ = try? error.decodedStatusDetails()
            _ = error.headers.description + error.trailers.description
        }
    }
}

/// Received metadata: `-bin` values split on commas and base64-decoded (padded or not), text
/// values kept, `grpc-status` parsed, `grpc-message` percent-decoded, `grpc-status-details-bin`
/// parsed as a `google.rpc.Status`.
///
/// Input: `name: value` lines.
enum GRPCMetadataTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        var input = FuzzInput(bytes)
        let fields = FuzzInput.fields(input.lines())
        let metadata = Metadata(receivedFields: fields.lazy.map { (name: $0.name, value: $0.value) })
        for (key, value) in metadata {
            if case .binary(let decoded) = value {
                try require(key.hasSuffix("-bin"), "a binary value under \(key.debugDescription)")
                for padded in [true, false] {
                    try require(
                        Base64Codec.standard.decode(Base64Codec.standard.encode(decoded, padded: padded)) == decoded,
                        "base64 did not read back its own encoding"
                    )
                }
            }
        }
        for field in fields {
            if let code = StatusCode(grpcStatus: field.value) {
                try require(
                    field.value.utf8.count <= 3 && field.value.utf8.allSatisfy { (0x30...0x39).contains($0) },
                    "grpc-status \(field.value.debugDescription) parsed as \(code)"
                )
                try require(Int(field.value) == code.rawValue, "grpc-status \(field.value) parsed as \(code.rawValue)")
            }
            let decoded = PercentEncoding.decodeMessage(field.value)
            if !field.value.utf8.contains(UInt8(ascii: "%")) {
                try require(decoded == field.value, "a grpc-message without % changed when decoded")
            }
        }
        let error = RPCError(code: .internalError, message: "", trailers: metadata)
        _ = try? error.decodedStatusDetails()
        _ = metadata.description
        // Any bytes as a base64 value and back.
        let raw = Array(input.rest())
        for padded in [true, false] {
            try require(
                Base64Codec.standard.decode(Base64Codec.standard.encode(raw, padded: padded)) == raw,
                "base64 did not read back \(raw.count) bytes"
            )
        }
    }
}

/// `grpc-encoding` decompression (gzip and deflate through zlib) under a size limit: hostile
/// streams, truncated ones and bombs.
///
/// Input: a first byte choosing the coding (bit 0) and the limit (bits 1...3: 0 B to 4 MiB),
/// then the compressed bytes.
enum GRPCCompressionTarget {
    private static let limits = [0, 1, 100, 4096, 65_536, 1 << 20, 4 << 20, 4 << 20]

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        guard let selector = bytes.first else { return }
        let coding: ContentCoding = selector & 1 == 0 ? .gzip : .deflate
        let limit = limits[Int(selector >> 1) & 7]
        let payload = bytes.dropFirst()
        if let output = try? coding.decompress(payload, limit: limit) {
            try require(
                output.count <= limit,
                "\(coding) decompressed \(output.count) bytes past the limit of \(limit)"
            )
        }
        // Whatever the bytes, compressing them reads back.
        let plain = Array(payload)
        let restored: [UInt8]
        do throws(ContentCoding.Failure) {
            restored = try coding.decompress(ArraySlice(coding.compress(plain)), limit: plain.count)
        } catch {
            throw OracleViolation("\(coding) refused its own output of \(plain.count) bytes: \(error)")
        }
        try require(restored == plain, "\(coding) did not read back its own output")
    }
}

/// `grpc-timeout`: every remaining time, counted in whole nanoseconds as a call counts it
/// (`ContinuousTime.nanoseconds(roundingUp:)`, clamped to `Int64`), encodes to at most eight
/// digits and a unit: never less than that count, the least count in the finest unit that fits.
///
/// Input: 16 bytes, a big-endian seconds count (any `Int64`) and attoseconds (taken modulo 10^18).
enum GRPCTimeoutTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        guard bytes.count >= 16 else { return }
        let seconds = bytes[0..<8].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let attoseconds = bytes[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }.magnitude % 1_000_000_000_000_000_000
        let remaining = Duration(secondsComponent: seconds, attosecondsComponent: Int64(attoseconds))
        let nanoseconds = ContinuousTime.nanoseconds(roundingUp: remaining)
        let exact = remaining.attoseconds
        try require(
            Int128(nanoseconds) * 1_000_000_000 >= min(exact, Int128(Int64.max) * 1_000_000_000)
                && (nanoseconds == .min || (Int128(nanoseconds) - 1) * 1_000_000_000 < exact),
            "\(remaining) counted as \(nanoseconds) ns"
        )
        let text = GRPCTimeout(nanoseconds: nanoseconds).description
        let digits = text.dropLast()
        try require(
            (1...8).contains(digits.count) && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber),
            "grpc-timeout \(text) for \(nanoseconds) ns is not 1 to 8 digits"
        )
        // Each unit in nanoseconds, finest first.
        let units: [(symbol: Character, nanoseconds: Int128)] = [
            ("n", 1), ("u", 1_000), ("m", 1_000_000), ("S", 1_000_000_000), ("M", 60_000_000_000),
            ("H", 3_600_000_000_000),
        ]
        guard let index = units.firstIndex(where: { $0.symbol == text.last }), let count = Int128(digits) else {
            throw OracleViolation("grpc-timeout \(text) for \(nanoseconds) ns has no unit")
        }
        guard nanoseconds > 0 else {
            try require(text == "1n", "a non-positive remaining time \(nanoseconds) ns encoded as \(text), not 1n")
            return
        }
        let unit = units[index].nanoseconds
        let time = Int128(nanoseconds)
        try require(count * unit >= time, "grpc-timeout \(text) is less than the \(nanoseconds) ns left")
        try require((count - 1) * unit < time, "grpc-timeout \(text) is not the least count for \(nanoseconds) ns")
        if index > 0 {
            let finer = units[index - 1].nanoseconds
            try require((time + finer - 1) / finer > 99_999_999, "grpc-timeout \(text): a finer unit fits")
        }
    }
}

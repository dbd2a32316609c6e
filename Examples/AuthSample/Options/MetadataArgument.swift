import AuthRPC
import Foundation

/// Parses `--metadata key=value` arguments: text values as given, `-bin` keys as base64.
enum MetadataArgument {
    static func parse(_ arguments: [String]) throws(ToolFailure) -> Metadata {
        var metadata = Metadata()
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw ToolFailure(
                    status: .usage,
                    message: "--metadata '\(argument)' is not of the form key=value",
                    hint: "for example: --metadata x-request-id=42, or --metadata trace-bin=AAEC (base64)"
                )
            }
            let key = String(argument[..<equals])
            let value = String(argument[argument.index(after: equals)...])
            if key.hasSuffix("-bin") {
                guard let bytes = Data(base64Encoded: padded(value)) else {
                    throw ToolFailure(
                        status: .usage,
                        message: "--metadata \(key): the value of a -bin key must be base64",
                        hint: nil
                    )
                }
                metadata.addBinary([UInt8](bytes), forKey: key)
            } else {
                metadata.addString(value, forKey: key)
            }
        }
        do throws(RPCError) {
            try metadata.validateForSending()
        } catch {
            throw ToolFailure(
                status: .usage,
                message: "--metadata: \(error.message)",
                hint: "keys are lowercase [0-9a-z_.-] and may not start with grpc-; text values are printable ASCII"
            )
        }
        return metadata
    }

    /// Base64 with its padding restored (gRPC sends it unpadded; Foundation wants it padded).
    private static func padded(_ text: String) -> String {
        let remainder = text.count % 4
        return remainder == 0 ? text : text + String(repeating: "=", count: 4 - remainder)
    }
}

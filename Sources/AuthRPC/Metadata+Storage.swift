import AuthRPCTransport

extension Metadata {
    /// Where the pairs live.
    ///
    /// Metadata received on a unary call keeps the header block's field array as the transport
    /// assembled it: reading it costs no allocation of its own. The first change, or an
    /// iteration (whose public iterator is an array's), copies the pairs out. Each case holds one
    /// array reference, so `Metadata` stays one word: it sits in every call's async frames.
    enum Storage: Sendable {
        /// Pairs added one by one, or copied out of received fields.
        case pairs([Element])
        /// Received fields, each one text pair. Fields with a `-bin` name are never kept this
        /// way: one such field can make several pairs, decoded when received.
        case received([HTTP2HeaderField])
    }

    /// The pairs, in order, wherever they live.
    struct Pairs: RandomAccessCollection {
        let storage: Storage

        var startIndex: Int { 0 }

        var endIndex: Int {
            switch storage {
            case .pairs(let pairs): pairs.count
            case .received(let fields): fields.count
            }
        }

        subscript(position: Int) -> Element {
            switch storage {
            case .pairs(let pairs):
                return pairs[position]
            case .received(let fields):
                let field = fields[position]
                return (key: field.name, value: .string(field.value))
            }
        }
    }

    /// Metadata from a received header block: shares `fields` unless a `-bin` field needs
    /// decoding.
    init(received fields: [HTTP2HeaderField]) {
        if fields.contains(where: { Self.isBinaryKey($0.name) }) {
            self.init(receivedFields: fields.lazy.map { (name: $0.name, value: $0.value) })
        } else {
            self.init(storage: fields.isEmpty ? .pairs([]) : .received(fields))
        }
    }

    /// The first received value under `key` (received fields are all text).
    static func firstValue(forKey key: String, in fields: [HTTP2HeaderField]) -> String? {
        fields.first { $0.name == key }?.value
    }
}

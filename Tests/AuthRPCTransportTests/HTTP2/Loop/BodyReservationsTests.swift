import Testing

@testable import AuthRPCTransport

@Suite("A connection grants bodies their declared size within its allowance")
struct BodyReservationsTests {
    /// Whether `reservations` grants `bytes` to stream `streamID` (a plain function, as the
    /// expectation macros take no mutating call).
    private static func grant(_ reservations: inout BodyReservations, _ bytes: Int, to streamID: Int32) -> Bool {
        reservations.reserve(bytes, for: streamID)
    }

    @Test("grants add up to the allowance and no further")
    func allowance() {
        var reservations = BodyReservations()
        #expect(reservations.isEmpty)
        for id: Int32 in [1, 3, 5] { #expect(Self.grant(&reservations, 4 << 20, to: id)) }
        #expect(reservations.reservedBytes == 12 << 20)
        #expect(!Self.grant(&reservations, (4 << 20) + 1, to: 7))
        #expect(Self.grant(&reservations, 4 << 20, to: 7))
        #expect(reservations.reservedBytes == BodyReservations.allowance)
        #expect(!Self.grant(&reservations, BodyReservations.minimum, to: 9))
        #expect(!reservations.isEmpty)
    }

    @Test("a size too small to be worth a grant gets none")
    func minimum() {
        var reservations = BodyReservations()
        #expect(!Self.grant(&reservations, BodyReservations.minimum - 1, to: 1))
        #expect(reservations.isEmpty && reservations.reservedBytes == 0)
        #expect(Self.grant(&reservations, BodyReservations.minimum, to: 1))
    }

    @Test("no more streams than the entry limit hold a grant, however small")
    func entryLimit() {
        var reservations = BodyReservations()
        for index in 0..<BodyReservations.entryLimit {
            #expect(Self.grant(&reservations, BodyReservations.minimum, to: Int32(2 * index + 1)))
        }
        #expect(!Self.grant(&reservations, BodyReservations.minimum, to: 1001))
        reservations.release(1)
        #expect(Self.grant(&reservations, BodyReservations.minimum, to: 1001))
    }

    @Test("a stream asking again is granted what it holds, and only the difference counts for more")
    func sameStream() {
        var reservations = BodyReservations(allowance: 3 << 20)
        #expect(Self.grant(&reservations, 1 << 20, to: 1))
        #expect(Self.grant(&reservations, 1 << 20, to: 1))
        #expect(Self.grant(&reservations, 512 << 10, to: 1))
        #expect(reservations.reservedBytes == 1 << 20)
        #expect(Self.grant(&reservations, 3 << 20, to: 1))
        #expect(reservations.reservedBytes == 3 << 20)
        #expect(!Self.grant(&reservations, 4 << 20, to: 1))
        #expect(reservations.reservedBytes == 3 << 20)
    }

    @Test("a released grant goes back to the allowance; releasing a stream without one changes nothing")
    func release() {
        var reservations = BodyReservations(allowance: 2 << 20)
        #expect(Self.grant(&reservations, 2 << 20, to: 1))
        #expect(!Self.grant(&reservations, 1 << 20, to: 3))
        reservations.release(3)
        #expect(reservations.reservedBytes == 2 << 20)
        reservations.release(1)
        #expect(reservations.isEmpty && reservations.reservedBytes == 0)
        #expect(Self.grant(&reservations, 1 << 20, to: 3))
    }

    @Test("an allowance of 0 grants nothing")
    func none() {
        var reservations = BodyReservations(allowance: 0)
        #expect(!Self.grant(&reservations, BodyReservations.minimum, to: 1))
        #expect(reservations.isEmpty)
    }
}

/// The random numbers one call's routing draws (a route's fraction, a weighted cluster), from
/// the call's own roll: SplitMix64, so the same roll always routes the same way.
struct XDSCallRandom: RandomNumberGenerator {
    private var state: UInt64

    init(roll: UInt64) {
        state = roll
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        return mixed ^ (mixed >> 31)
    }
}

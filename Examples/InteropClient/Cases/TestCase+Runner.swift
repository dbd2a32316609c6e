extension TestCase {
    /// The case's calls and checks.
    var runner: any InteropCase {
        switch self {
        case .emptyUnary: EmptyUnary()
        case .largeUnary: LargeUnary()
        case .clientCompressedUnary: ClientCompressedUnary()
        case .serverCompressedUnary: ServerCompressedUnary()
        case .customMetadata: CustomMetadata()
        case .statusCodeAndMessage: StatusEcho(message: StatusEcho.plainMessage)
        case .specialStatusMessage: StatusEcho(message: StatusEcho.specialMessage)
        case .unimplementedMethod: Unimplemented(wholeService: false)
        case .unimplementedService: Unimplemented(wholeService: true)
        case .pickFirstUnary: PickFirstUnary()
        case .rpcSoak: Soak(resetsChannel: false)
        case .channelSoak: Soak(resetsChannel: true)
        case .computeEngineCreds: ComputeEngineCreds()
        case .serviceAccountCreds: ServiceAccountCreds()
        case .jwtTokenCreds: JWTTokenCreds()
        case .oauth2AuthToken: OAuth2AuthToken()
        case .perRPCCreds: PerRPCCreds()
        case .googleDefaultCredentials: GoogleDefaultCredentials()
        case .computeEngineChannelCredentials: ComputeEngineChannelCredentials()
        }
    }
}

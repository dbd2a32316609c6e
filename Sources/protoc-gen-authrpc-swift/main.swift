// protoc-gen-authrpc-swift: protoc runs it as `--authrpc-swift_out=DIR`, with the options
// `Visibility`, `FileNaming` and `ProtoPathModuleMappings` (protoc-gen-swift's meanings).
import AuthRPCCodeGen
import SwiftProtobufPluginLibrary

ClientCodeGenerator.main()

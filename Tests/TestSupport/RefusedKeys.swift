/// Private keys a signer must refuse, for refusal tests (none of them is a credential anywhere).
public enum RefusedKeys {
    /// An EC P-256 key in PKCS#8: not RSA.
    public static let ecP256 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7UxypdOXKtrk5pBp
        yi9roX+S3wk5EptKvz+ZR4DnK+ehRANCAATZXDcXjDm0HIpiqBamJkQqZk8zPZHj
        oF6P7j/c7D4FXl90JbD1L7u5IwxI+eiZGKIlspkxwhF+Bc0T1eBx8UIH
        -----END PRIVATE KEY-----

        """

    /// A 1024-bit RSA key in PKCS#8: too small.
    public static let rsa1024 = """
        -----BEGIN PRIVATE KEY-----
        MIICeAIBADANBgkqhkiG9w0BAQEFAASCAmIwggJeAgEAAoGBANiamtYs4AKy7Bqi
        1iLp33IUImwvwkfYaZQs7yazPTtRaBP2/g3BnL4G7/0FGBdWmPThK/ClcerXca1H
        lhAYSKpfh0JtwuEfRtjGML4aqBzltBwYVSqoNbis9FExD4cLvB7e4yekntJHyG/9
        nBjR0mxurHuETpBuxzKUysrBb1nFAgMBAAECgYEAoWBWeblHUFtzksi9F5f9FOYx
        Wz8d1R9EUdREfSXPOfGFxFIhp6gXGnDavjzcXQ70uIVGkm0A+YF4PSx3fhhJkd67
        I5ZS4dYGHUxwMX0mWUx6HoS3q9jEh1ps2B/qk+YYgKhnSeMNZxlaJCKOBhIEwvCj
        NfRnRUFtTSGt9yV9PsECQQDy31L1ajufQvisABee4UAOnrZDJIwHtpNQxXWgqM7q
        CeqwuTKHaxymq776NFCGJsiaLtoy4rIuSBNXm6kyZ5U1AkEA5E/MhehPIfIK0cK5
        2BdXIlLd40rns5r9qmL4YCgeae6cF4OwniLnpht+VgdtskGC6DrXeZuXfR5T+9MI
        kB0UUQJBAInEIjOxseZSP+qZFsz56rMgVjTZ61CIwSGlEGc0ukJJo8XhF4d3O8ZT
        T75vpGmkYFANWZpZu0bDfa1JT/2Wgi0CQQCqZgh+dLkC29RJY+0yo5Dr1C85IcG2
        odnrHjzD/41bgLPNNQNPsztzFRgAe0DbBtv+GVSStZal0knaLFI6xQlRAkBv0cl3
        zRc2B+N/vMwF6BlRhID2Rd/kVkobSMw2WkC44IuBVINQRYkCG37Az9vrpUM2IyZi
        iSWv5dyWwwN66JIS
        -----END PRIVATE KEY-----

        """
}

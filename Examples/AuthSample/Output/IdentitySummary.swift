import OAuth2

/// Who a session stands for, from its ID token: `user@example.com (verified)`, or the subject;
/// `nil` without an ID token.
func IdentitySummary(state: AuthState) -> String? {
    if let email = state.userEmail {
        return email + (state.userEmailIsVerified == true ? " (verified)" : "")
    }
    return state.userID.map { "user \($0)" }
}

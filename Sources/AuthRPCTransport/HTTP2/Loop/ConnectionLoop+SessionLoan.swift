import AuthRPCSystem

/// A caller's stream submitted on the caller's own thread while the I/O thread sleeps.
///
/// A caller that runs elsewhere than the I/O thread (any task on the default executor) used to
/// hand every stream over as a command and wake the thread to submit it: an eventfd write, the
/// thread's wake-up, the read that clears it and one more poll(2), about a context switch a
/// call on top of the response's own wake-up. When the thread sleeps with nothing to write, the
/// caller now takes the session instead, submits and writes the stream itself (one
/// non-blocking `send`), and gives the session back; the thread wakes only for the response.
///
/// The session goes from hand to hand through the inbox's lock, which orders every touch of the
/// loop's state on either side:
/// - the thread lends it (`ConnectionInbox.lendable`) as the last thing before poll(2), and only
///   when no stream is open and nothing is queued, left to write or to reset: with streams open,
///   the calls that come while it waits go out together in its next write, one `send` for all
///   (lent then, each would make a `send` of its own, and at 100 calls in flight cost about a
///   fifth more CPU a call);
/// - one caller borrows it, once a sleep (`lent`);
/// - the thread reclaims it as the first thing after poll(2), and when it is still out, sleeps
///   on its wake-up descriptor until the borrower signals its return (`ownerWaiting`).
///
/// The borrower leaves to the thread whatever needs a turn of the loop, and wakes it for that:
/// a write the socket did not take whole (POLLOUT), a failed write (the thread ends the
/// connection), and a timer earlier than the thread's own wake (a deadline, a keepalive) where
/// no ``WakeTimer`` can be armed for it.
extension ConnectionLoop {
    /// Submits `stream` on the calling thread when the I/O thread lends its session, else
    /// queues it for the thread. Returns the error to fail with when the connection no longer
    /// takes streams.
    func submitFromCaller(_ stream: HTTP2Stream) -> TransportFailure? {
        let (refusal, borrowed, wake, threadWakesAt) = inbox.withLock {
            inbox -> (TransportFailure?, Bool, Bool, ContinuousTime?) in
            switch inbox.phase {
            case .draining(let error), .closed(let error):
                return (Self.notSent(error), false, false, nil)
            case .ready where inbox.lendable && !inbox.wakePending:
                inbox.lendable = false
                inbox.lent = true
                inbox.loans += 1
                return (nil, true, false, inbox.sleepsUntil)
            case .connecting, .ready:
                inbox.commands.append(.submit(stream))
                return (nil, false, inbox.needsWakeup(), nil)
            }
        }
        if wake { wakeup.signal() }
        if borrowed { submitOnLoan(stream, threadWakesAt: threadWakesAt) }
        return refusal
    }

    /// What the I/O thread's turn does for a new stream (submit, write), done by the borrower;
    /// then the session goes back, with a wake-up when the thread has work of its own now.
    private func submitOnLoan(_ stream: HTTP2Stream, threadWakesAt: ContinuousTime?) {
        submit(stream, now: .now)
        // As the turn's idle check would: a stream is open, so the connection is not idle.
        if !noStreamOpen { idleSince = nil }
        do throws(TransportFailure) {
            try flush()
        } catch {
            loanFailure = error
        }
        var needsTurn = loanFailure != nil || !output.isEmpty
        if !needsTurn, let next = nextWake(),
            next < min(threadWakesAt ?? .distantFuture, wakeTimerArmedFor ?? .distantFuture)
        {
            if let wakeTimer, wakeTimer.arm(at: next) {
                wakeTimerArmedFor = next
            } else {
                needsTurn = true
            }
        }
        let signal = inbox.withLock { inbox -> Bool in
            inbox.lent = false
            // The session stays with the thread until it wakes (for the response, at the
            // latest): the calls that come meanwhile find a stream open, and are queued.
            guard needsTurn || inbox.ownerWaiting else { return false }
            inbox.ownerWaiting = false
            return inbox.needsWakeup()
        }
        if signal { wakeup.signal() }
    }
}

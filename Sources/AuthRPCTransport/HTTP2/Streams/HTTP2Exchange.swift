import AuthRPCSystem

/// A request on a stream of its own, taken by the calling task and not yet submitted.
///
/// ``answer()`` submits it and waits. A caller that cannot afford that async frame does what it
/// does in its own: inside `withTaskCancellationHandler`, ``submit(answeringTo:)`` exactly once
/// from the operation's `withUnsafeContinuation`, and ``cancel()`` from the cancellation
/// handler; right after the continuation returns, ``received()`` and ``keepBody(of:)``. The I/O
/// thread resumes the continuation exactly once: with the response, the stream's failure, or
/// ``TransportFailure/cancelled`` after a cancel.
package struct HTTP2Exchange: Sendable {
    /// The answer, and whether the response's final header block had arrived by then (after a
    /// failure, `true` means the server certainly processed the request).
    package typealias Answer = (result: Result<HTTP2Response, TransportFailure>, afterHeaders: Bool)

    let loop: ConnectionLoop
    let stream: HTTP2Stream
    /// The exchange the stream carries for this caller: a cancel that comes after the stream
    /// has moved on to another exchange names an older generation and is ignored.
    let generation: UInt32

    /// Submits the request and waits for the answer; a cancelled task's stream is reset with
    /// CANCEL and the answer is ``TransportFailure/cancelled``.
    nonisolated(nonsending) package func answer() async -> Answer {
        let answer = await withTaskCancellationHandler {
            await withUnsafeContinuation { submit(answeringTo: $0) }
        } onCancel: {
            cancel()
        }
        received()
        keepBody(of: answer.result)
        return answer
    }

    /// Shows ThreadSanitizer that what the I/O thread wrote for the answer the continuation just
    /// returned (a failure's payload, the response's buffers) came first: a resume that overtakes
    /// the task's suspension is ordered only inside the concurrency runtime. Call it right after
    /// the continuation returns. It takes and gives back no answer: passing the answer through
    /// a call around the `await` kept a second copy of it in the caller's async frame, which
    /// grew `Channel.perform`'s from 560 to 608 bytes and cost every waiting call another
    /// task-allocator slab (about 1 KiB).
    @inline(__always)
    package func received() {
        ThreadSanitizerHandoff.receive(stream)
    }

    /// Keeps a large response body for the connection's next large response when the caller
    /// runs on the connection's own thread (ConnectionLoop+SpareBody). Call it after
    /// ``received()``. Not inlined: its binding of the response would take room in the caller's
    /// async frame (32 bytes in `Channel.perform`'s, past its task-allocator slab).
    @inline(never)
    package func keepBody(of result: Result<HTTP2Response, TransportFailure>) {
        guard case .success(let response) = result, response.body.capacity >= ConnectionLoop.spareBodyMinimum else {
            return
        }
        loop.keepSpareBody(response.body)
    }

    /// Hands the stream to the I/O thread, which answers `continuation` exactly once (at once,
    /// with the refusal, when the connection no longer takes streams). When that thread sleeps,
    /// the stream is submitted and written from this one (ConnectionLoop+SessionLoan).
    package func submit(answeringTo continuation: UnsafeContinuation<Answer, Never>) {
        // The stream is still the calling task's alone: set before the inbox's lock orders it
        // before anything the I/O thread does with the stream.
        stream.completion = continuation
        if let refusal = loop.submitFromCaller(stream) {
            stream.finish(.failure(refusal))
        }
    }

    /// Asks the I/O thread to reset the stream with CANCEL and answer with
    /// ``TransportFailure/cancelled`` (nothing, when the exchange has already been answered).
    package func cancel() {
        _ = loop.enqueue(.cancel(stream, generation: generation))
    }
}

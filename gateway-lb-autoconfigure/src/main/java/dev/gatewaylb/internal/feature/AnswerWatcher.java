package dev.gatewaylb.internal.feature;

import org.springframework.core.io.buffer.DataBuffer;

/**
 * Watches what an exchange answers its client, for a feature that compares it with
 * another answer: the status an upstream answered with, the body as the gateway writes
 * it, and the exchange's end. The exchange's lease holds at most one; the gateway's
 * response calls it on the exchange's threads, one call at a time, in this order.
 */
public interface AnswerWatcher {

	/**
	 * The upstream answered the client with this status.
	 * @param status the status
	 */
	void status(int status);

	/**
	 * A chunk of the answer's body as the gateway writes it.
	 * @param chunk the chunk, to read and leave as it is
	 */
	void body(DataBuffer chunk);

	/**
	 * The answer's body was written whole.
	 */
	void bodyEnded();

	/**
	 * The answer is written as a stream of flushed chunks, whose body the gateway does
	 * not see chunk by chunk.
	 */
	void streamed();

	/**
	 * The exchange is over, whatever its end: the last call.
	 */
	void exchangeEnded();

}

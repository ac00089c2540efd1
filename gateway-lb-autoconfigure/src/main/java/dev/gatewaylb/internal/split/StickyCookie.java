package dev.gatewaylb.internal.split;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Mints and recognises the values of a split's sticky cookie: {@code hex(unix millis)}
 * and {@code hex(counter)}, 12 lowercase hex digits each, 24 in all, for example
 * {@code 019ad2f36c1e00000000002a}.
 * <p>
 * A value is an opaque handle that chooses among targets the operator configured, not a
 * secret and not an identity: a client that forges one only lands where it could have
 * landed anyway. Values are unique within a process (the counter) and spread across
 * replicas (it starts at a random point). Thread-safe; minting allocates the string only.
 */
public final class StickyCookie {

	/**
	 * Length of a value.
	 */
	public static final int LENGTH = 24;

	private static final char[] HEX = "0123456789abcdef".toCharArray();

	private final LongSupplier epochMillis;

	private final AtomicLong counter;

	/**
	 * Creates a minter.
	 * @param epochMillis the wall clock, milliseconds since the Unix epoch
	 * @param counterStart where the counter starts, random in production
	 */
	public StickyCookie(LongSupplier epochMillis, long counterStart) {
		this.epochMillis = epochMillis;
		this.counter = new AtomicLong(counterStart);
	}

	/**
	 * Returns whether {@code value} is a well-formed sticky value: 24 lowercase hex
	 * digits.
	 * @param value a cookie value, or {@code null}
	 * @return whether it can be used as the split key
	 */
	public static boolean isValid(@Nullable String value) {
		if (value == null || value.length() != LENGTH) {
			return false;
		}
		for (int i = 0; i < LENGTH; i++) {
			char c = value.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns a new value.
	 * @return 24 lowercase hex digits
	 */
	public String mint() {
		char[] value = new char[LENGTH];
		write(value, 0, this.epochMillis.getAsLong());
		write(value, LENGTH / 2, this.counter.getAndIncrement());
		return new String(value);
	}

	/**
	 * Writes the low 48 bits of {@code number} as 12 hex digits.
	 */
	private static void write(char[] into, int offset, long number) {
		for (int i = LENGTH / 2 - 1; i >= 0; i--) {
			into[offset + i] = HEX[(int) (number & 0xf)];
			number >>>= 4;
		}
	}

}

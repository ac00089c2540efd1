package dev.gatewaylb.internal.balance;

/**
 * A 64-bit hash that is the same on every JVM, every release and every gateway replica:
 * FNV-1a over the UTF-8 bytes of the input, finished with MurmurHash3's {@code fmix64} so
 * that short, similar keys (IP addresses, counters) spread over the whole range.
 * <p>
 * {@link String#hashCode()} would be stable too, but 32 bits are too few for a ring of
 * 160,000 points; {@code Object.hashCode} and the JDK's hash maps are not stable at all.
 * Consistent hashing and traffic splits both depend on this function: changing it remaps
 * every session, so it never changes.
 *
 * @see <a href="http://www.isthe.com/chongo/tech/comp/fnv/">FNV</a>
 * @see <a href="https://github.com/aappleby/smhasher/wiki/MurmurHash3">MurmurHash3</a>
 */
public final class StableHash {

	static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;

	static final long FNV_PRIME = 0x100000001b3L;

	private StableHash() {
	}

	/**
	 * Returns the hash of the UTF-8 encoding of {@code text}.
	 * @param text any text; an unpaired surrogate is encoded as {@code '?'}, like
	 * {@link String#getBytes(java.nio.charset.Charset)}
	 * @return the hash
	 */
	public static long hash(CharSequence text) {
		return fmix64(fnv1a(FNV_OFFSET_BASIS, text));
	}

	/**
	 * Returns the hash of {@code bytes}.
	 * @param bytes any bytes
	 * @return the hash
	 */
	public static long hash(byte[] bytes) {
		long h = FNV_OFFSET_BASIS;
		for (byte b : bytes) {
			h = fnv1a(h, b);
		}
		return fmix64(h);
	}

	/**
	 * Continues an FNV-1a state over the UTF-8 encoding of {@code text} without
	 * allocating the bytes.
	 */
	static long fnv1a(long state, CharSequence text) {
		long h = state;
		int length = text.length();
		for (int i = 0; i < length; i++) {
			char c = text.charAt(i);
			if (c < 0x80) {
				h = fnv1a(h, c);
			}
			else if (c < 0x800) {
				h = fnv1a(h, 0xc0 | (c >> 6));
				h = fnv1a(h, 0x80 | (c & 0x3f));
			}
			else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1))) {
				int cp = Character.toCodePoint(c, text.charAt(++i));
				h = fnv1a(h, 0xf0 | (cp >> 18));
				h = fnv1a(h, 0x80 | ((cp >> 12) & 0x3f));
				h = fnv1a(h, 0x80 | ((cp >> 6) & 0x3f));
				h = fnv1a(h, 0x80 | (cp & 0x3f));
			}
			else if (Character.isSurrogate(c)) {
				h = fnv1a(h, '?');
			}
			else {
				h = fnv1a(h, 0xe0 | (c >> 12));
				h = fnv1a(h, 0x80 | ((c >> 6) & 0x3f));
				h = fnv1a(h, 0x80 | (c & 0x3f));
			}
		}
		return h;
	}

	/**
	 * Continues an FNV-1a state over the decimal digits of a non-negative number.
	 */
	static long fnv1aDecimal(long state, int value) {
		if (value >= 10) {
			state = fnv1aDecimal(state, value / 10);
		}
		return fnv1a(state, '0' + value % 10);
	}

	static long fnv1a(long state, int octet) {
		return (state ^ (octet & 0xff)) * FNV_PRIME;
	}

	/**
	 * MurmurHash3's 64-bit finalizer: every input bit affects every output bit.
	 */
	static long fmix64(long k) {
		k ^= k >>> 33;
		k *= 0xff51afd7ed558ccdL;
		k ^= k >>> 33;
		k *= 0xc4ceb9fe1a85ec53L;
		k ^= k >>> 33;
		return k;
	}

}

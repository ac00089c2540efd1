package dev.gatewaylb.internal.affinity.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.util.ArrayList;
import java.util.List;

import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

import dev.gatewaylb.internal.balance.StableHash;

/**
 * Signs and checks the values of a service's endpoint affinity cookie
 * ({@code affinity.cookie}): which endpoint a session stays on, in a form any replica
 * that shares the secret honours and no client can forge.
 * <p>
 * A value is 38 characters: 16 lowercase hex digits of the endpoint's id (a stable hash
 * of its {@code host:port}, {@link #endpointId}), then 22 base64url characters (no
 * padding) of an HMAC-SHA256 over the service's name and that id, truncated to 128 bits.
 * The endpoint is not named in clear, as Spring Cloud LoadBalancer's
 * {@code sc-lb-instance-id} names it: the id is only useful to a gateway that knows the
 * service's members. The service is in the MAC, so a cookie of another service with the
 * same secret is refused.
 * <p>
 * Checking tries the current secret, then each previous one ({@code previous-secrets}),
 * so that a rotation keeps the sessions: deploy the new secret with the old one as
 * previous, and every cookie a replica mints from then on is signed with the new one.
 * <p>
 * Total on any input: a value of the wrong length, with a character outside its alphabet,
 * a non-canonical last character or a MAC that does not match is {@link #REJECTED}, never
 * an exception. Linear in the value's length, which it checks first. Thread-safe: a
 * {@link Mac} is not, so each thread keeps its own, with its scratch buffers, in a
 * {@link ThreadLocal} (an event loop is one thread, and there are a few); a check then
 * allocates nothing but what {@link Mac#doFinal(byte[], int)} allocates inside the JDK:
 * the 32 bytes of the MAC, which it copies into the scratch buffer (48 bytes a MAC,
 * {@code EndpointCookieBenchmark}). {@link #check(CharSequence, int, int)} reads a value
 * where it lies in a {@code Cookie} line, so following a cookie copies nothing.
 */
public final class EndpointCookie {

	/**
	 * Length of a value.
	 */
	public static final int LENGTH = 38;

	/**
	 * What {@link #check} returns for a value no secret signed.
	 */
	public static final int REJECTED = -1;

	private static final int ID_DIGITS = 16;

	private static final int MAC_BYTES = 16;

	private static final int MAC_CHARS = 22;

	private static final String ALGORITHM = "HmacSHA256";

	private static final char[] HEX = "0123456789abcdef".toCharArray();

	private static final char[] BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		.toCharArray();

	/**
	 * Minimum length of a secret in bytes: the 256 bits of the hash (RFC 2104 asks for at
	 * least the hash's output length).
	 */
	public static final int MIN_SECRET_BYTES = 32;

	private final byte[] service;

	private final List<SecretKeySpec> keys;

	private final ThreadLocal<Scratch> scratch;

	/**
	 * Creates the signer of one service's cookies.
	 * @param service the service's name, part of what is signed
	 * @param secret the secret that signs, at least {@value #MIN_SECRET_BYTES} bytes
	 * @param previousSecrets secrets still accepted, newest first
	 */
	public EndpointCookie(String service, byte[] secret, List<byte[]> previousSecrets) {
		this.service = service.getBytes(StandardCharsets.UTF_8);
		List<SecretKeySpec> keys = new ArrayList<>();
		keys.add(key(secret, "secret"));
		for (byte[] previous : previousSecrets) {
			keys.add(key(previous, "previous secret"));
		}
		this.keys = List.copyOf(keys);
		this.scratch = ThreadLocal.withInitial(() -> new Scratch(this.keys));
	}

	private static SecretKeySpec key(byte[] secret, String what) {
		if (secret.length < MIN_SECRET_BYTES) {
			throw new IllegalArgumentException(
					what + ": " + secret.length + " bytes (expected: at least " + MIN_SECRET_BYTES + ")");
		}
		return new SecretKeySpec(secret, ALGORITHM);
	}

	/**
	 * Returns the id of the endpoint at {@code address}, what a value carries: a stable
	 * 64-bit hash of its {@code host:port} ({@link StableHash}), the same on every
	 * replica and across restarts.
	 * @param address the endpoint's {@code host:port}, an IPv6 host in brackets, as
	 * {@code Endpoint#address()} spells it
	 * @return the id
	 */
	public static long endpointId(String address) {
		return StableHash.hash(address);
	}

	/**
	 * Returns a value for the endpoint of id {@code endpointId}, signed with the current
	 * secret. Allocates the value (an answer that sets the cookie is rare against the
	 * requests that follow it).
	 * @param endpointId the endpoint's id
	 * @return the cookie's value, {@value #LENGTH} characters
	 */
	public String sign(long endpointId) {
		Scratch scratch = this.scratch.get();
		scratch.mac(0, this.service, endpointId);
		char[] value = new char[LENGTH];
		long id = endpointId;
		for (int i = ID_DIGITS - 1; i >= 0; i--) {
			value[i] = HEX[(int) (id & 0xf)];
			id >>>= 4;
		}
		encodeMac(scratch.out, value, ID_DIGITS);
		return new String(value);
	}

	/**
	 * Returns which secret signed {@code value}: 0 for the current one, 1 for the first
	 * previous one and so on, or {@link #REJECTED}.
	 * @param value a cookie value, any text
	 * @return the index of the secret, or {@link #REJECTED}
	 */
	public int check(CharSequence value) {
		return check(value, 0, value.length());
	}

	/**
	 * Returns which secret signed the value at {@code start} to {@code end} of
	 * {@code text}, as {@link #check(CharSequence)} does, read in place: a request's
	 * {@code Cookie} line is checked without copying the value out of it.
	 * @param text text that holds a cookie value, any text
	 * @param start where the value starts
	 * @param end where it ends
	 * @return the index of the secret, or {@link #REJECTED}
	 */
	public int check(CharSequence text, int start, int end) {
		if (end - start != LENGTH) {
			return REJECTED;
		}
		long id = 0;
		for (int i = 0; i < ID_DIGITS; i++) {
			int digit = hexDigit(text.charAt(start + i));
			if (digit < 0) {
				return REJECTED;
			}
			id = (id << 4) | digit;
		}
		Scratch scratch = this.scratch.get();
		if (!decodeMac(text, start + ID_DIGITS, scratch.given)) {
			return REJECTED;
		}
		for (int key = 0; key < this.keys.size(); key++) {
			scratch.mac(key, this.service, id);
			if (sameMac(scratch.out, scratch.given)) {
				return key;
			}
		}
		return REJECTED;
	}

	/**
	 * Returns the endpoint id of a value {@link #check} accepted.
	 * @param value a value {@link #check} did not reject
	 * @return the endpoint's id
	 */
	public static long endpointIdOf(CharSequence value) {
		return endpointIdOf(value, 0);
	}

	/**
	 * Returns the endpoint id of a value {@link #check} accepted, read in place.
	 * @param text the text that holds the value
	 * @param start where the value starts
	 * @return the endpoint's id
	 */
	public static long endpointIdOf(CharSequence text, int start) {
		long id = 0;
		for (int i = 0; i < ID_DIGITS; i++) {
			id = (id << 4) | hexDigit(text.charAt(start + i));
		}
		return id;
	}

	private static int hexDigit(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		if (c >= 'a' && c <= 'f') {
			return c - 'a' + 10;
		}
		return -1;
	}

	private static int base64Digit(char c) {
		if (c >= 'A' && c <= 'Z') {
			return c - 'A';
		}
		if (c >= 'a' && c <= 'z') {
			return c - 'a' + 26;
		}
		if (c >= '0' && c <= '9') {
			return c - '0' + 52;
		}
		if (c == '-') {
			return 62;
		}
		if (c == '_') {
			return 63;
		}
		return -1;
	}

	/**
	 * Writes the first {@value #MAC_BYTES} bytes of {@code mac} as {@value #MAC_CHARS}
	 * base64url characters: five groups of three bytes, then the last byte as two
	 * characters whose last four bits are zero.
	 */
	private static void encodeMac(byte[] mac, char[] into, int offset) {
		int at = offset;
		for (int i = 0; i < 15; i += 3) {
			int bits = ((mac[i] & 0xff) << 16) | ((mac[i + 1] & 0xff) << 8) | (mac[i + 2] & 0xff);
			into[at++] = BASE64URL[(bits >>> 18) & 0x3f];
			into[at++] = BASE64URL[(bits >>> 12) & 0x3f];
			into[at++] = BASE64URL[(bits >>> 6) & 0x3f];
			into[at++] = BASE64URL[bits & 0x3f];
		}
		int last = mac[15] & 0xff;
		into[at++] = BASE64URL[last >>> 2];
		into[at] = BASE64URL[(last & 0x3) << 4];
	}

	/**
	 * Reads {@value #MAC_CHARS} base64url characters into {@value #MAC_BYTES} bytes;
	 * false for a character outside the alphabet or a last character with bits the
	 * encoding leaves zero (one MAC, one spelling).
	 */
	private static boolean decodeMac(CharSequence value, int offset, byte[] into) {
		int at = offset;
		for (int i = 0; i < 15; i += 3) {
			int a = base64Digit(value.charAt(at++));
			int b = base64Digit(value.charAt(at++));
			int c = base64Digit(value.charAt(at++));
			int d = base64Digit(value.charAt(at++));
			if ((a | b | c | d) < 0) {
				return false;
			}
			int bits = (a << 18) | (b << 12) | (c << 6) | d;
			into[i] = (byte) (bits >>> 16);
			into[i + 1] = (byte) (bits >>> 8);
			into[i + 2] = (byte) bits;
		}
		int a = base64Digit(value.charAt(at++));
		int b = base64Digit(value.charAt(at));
		if ((a | b) < 0 || (b & 0xf) != 0) {
			return false;
		}
		into[15] = (byte) ((a << 2) | (b >>> 4));
		return true;
	}

	/**
	 * Compares the first {@value #MAC_BYTES} bytes in time that does not depend on where
	 * they differ, so that a client cannot find a MAC byte by byte from the answer times.
	 */
	private static boolean sameMac(byte[] computed, byte[] given) {
		int difference = 0;
		for (int i = 0; i < MAC_BYTES; i++) {
			difference |= computed[i] ^ given[i];
		}
		return difference == 0;
	}

	/**
	 * One thread's MACs, one per secret, and its buffers.
	 */
	private static final class Scratch {

		private final Mac[] macs;

		private final byte[] id = new byte[9];

		private final byte[] out = new byte[32];

		private final byte[] given = new byte[MAC_BYTES];

		Scratch(List<SecretKeySpec> keys) {
			this.macs = new Mac[keys.size()];
			try {
				for (int i = 0; i < this.macs.length; i++) {
					this.macs[i] = Mac.getInstance(ALGORITHM);
					this.macs[i].init(keys.get(i));
				}
			}
			catch (InvalidKeyException ex) {
				throw new IllegalArgumentException("affinity secret: " + ex.getMessage(), ex);
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException("the JDK has no " + ALGORITHM, ex);
			}
		}

		/**
		 * Computes the MAC of key {@code key} over the service, a zero byte and the id's
		 * eight bytes (the zero byte keeps a service name from running into an id) into
		 * {@link #out}.
		 */
		void mac(int key, byte[] service, long endpointId) {
			Mac mac = this.macs[key];
			this.id[0] = 0;
			for (int i = 0; i < 8; i++) {
				this.id[1 + i] = (byte) (endpointId >>> (56 - 8 * i));
			}
			mac.update(service);
			mac.update(this.id);
			try {
				mac.doFinal(this.out, 0);
			}
			catch (ShortBufferException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}

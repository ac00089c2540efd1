package dev.gatewaylb.internal.affinity.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

import dev.gatewaylb.internal.balance.StableHash;

/**
 * Signs and checks the values of a service's endpoint affinity cookie
 * ({@code affinity.cookie}): which endpoint a session stays on, since when, in a form any
 * replica that shares the secret honours and no client can forge, read or keep for ever.
 * <p>
 * A value is 44 base64url characters (no padding): 22 of one AES-128 block, the
 * endpoint's id (a stable hash of its {@code host:port}, {@link #endpointId}) and the
 * second the value was issued, encrypted; then 22 of an HMAC-SHA256 over the service's
 * name and that block, truncated to 128 bits. The endpoint is not named, not even by a
 * hash an attacker could match against guessed addresses, as it would be in clear (and as
 * Spring Cloud LoadBalancer's {@code sc-lb-instance-id} names it); the issue time makes a
 * copied value useless after the cookie's lifetime. The service is in the MAC, so a
 * cookie of another service with the same secret is refused. Both keys, the block
 * cipher's and the MAC's, come from the secret.
 * <p>
 * Checking tries the current secret, then each previous one ({@code previous-secrets}),
 * so that a rotation keeps the sessions: deploy the new secret with the old one as
 * previous, and every cookie a replica mints from then on is signed with the new one.
 * <p>
 * Total on any input: a value of the wrong length, with a character outside its alphabet,
 * a non-canonical last character, a MAC that does not match or a block that does not
 * decrypt to an id, a time and zeros is {@link #REJECTED}; one older than the lifetime
 * (or from further in the future than the replicas' clocks can differ) is
 * {@link #EXPIRED}; never an exception. Linear in the value's length, which it checks
 * first. Thread-safe: a {@link Mac} or a {@link Cipher} is not, so each thread keeps its
 * own, with its scratch buffers, in a {@link ThreadLocal} (an event loop is one thread,
 * and there are a few); a check then allocates nothing but what
 * {@link Mac#doFinal(byte[], int)} allocates inside the JDK.
 * {@link #check(CharSequence, int, int)} reads a value where it lies in a {@code Cookie}
 * line, so following a cookie copies nothing; what it read is then on the thread's
 * scratch ({@link #checkedEndpointId()}, {@link #checkedAgeSeconds()}).
 */
public final class EndpointCookie {

	/**
	 * Length of a value.
	 */
	public static final int LENGTH = 44;

	/**
	 * What {@link #check} returns for a value no secret signed.
	 */
	public static final int REJECTED = -1;

	/**
	 * What {@link #check} returns for a value a secret signed longer ago than the
	 * lifetime.
	 */
	public static final int EXPIRED = -2;

	/**
	 * How far in the future a value's issue time may be: the replicas' wall clocks differ
	 * by a little.
	 */
	static final long MAX_CLOCK_SKEW_SECONDS = 300;

	private static final int BLOCK_BYTES = 16;

	private static final int MAC_BYTES = 16;

	private static final int CHARS = 22;

	private static final String MAC_ALGORITHM = "HmacSHA256";

	private static final String CIPHER = "AES/ECB/NoPadding";

	private static final byte[] CIPHER_KEY_LABEL = "gateway-lb affinity endpoint id key"
		.getBytes(StandardCharsets.US_ASCII);

	private static final char[] BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		.toCharArray();

	/**
	 * Minimum length of a secret in bytes: the 256 bits of the hash (RFC 2104 asks for at
	 * least the hash's output length).
	 */
	public static final int MIN_SECRET_BYTES = 32;

	private final byte[] service;

	private final List<Keys> keys;

	private final long lifetimeSeconds;

	private final LongSupplier epochSeconds;

	private final ThreadLocal<Scratch> scratch;

	/**
	 * Creates the signer of one service's cookies.
	 * @param service the service's name, part of what is signed
	 * @param secret the secret that signs, at least {@value #MIN_SECRET_BYTES} bytes
	 * @param previousSecrets secrets still accepted, newest first
	 * @param lifetimeSeconds how long a value is followed after it was issued
	 * @param epochSeconds the wall clock, in seconds since the epoch: a value minted on
	 * one replica is checked on another
	 */
	public EndpointCookie(String service, byte[] secret, List<byte[]> previousSecrets, long lifetimeSeconds,
			LongSupplier epochSeconds) {
		if (lifetimeSeconds <= 0) {
			throw new IllegalArgumentException("lifetime: " + lifetimeSeconds + " s (expected: > 0)");
		}
		this.service = service.getBytes(StandardCharsets.UTF_8);
		List<Keys> keys = new ArrayList<>();
		keys.add(Keys.of(secret, "secret"));
		for (byte[] previous : previousSecrets) {
			keys.add(Keys.of(previous, "previous secret"));
		}
		this.keys = List.copyOf(keys);
		this.lifetimeSeconds = lifetimeSeconds;
		this.epochSeconds = epochSeconds;
		this.scratch = ThreadLocal.withInitial(() -> new Scratch(this.keys));
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
	 * Returns how long a value is followed after it was issued.
	 * @return the lifetime in seconds
	 */
	public long lifetimeSeconds() {
		return this.lifetimeSeconds;
	}

	/**
	 * Returns a value for the endpoint of id {@code endpointId}, issued now and signed
	 * with the current secret. Allocates the value (an answer that sets the cookie is
	 * rare against the requests that follow it).
	 * @param endpointId the endpoint's id
	 * @return the cookie's value, {@value #LENGTH} characters
	 */
	public String sign(long endpointId) {
		Scratch scratch = this.scratch.get();
		long issued = this.epochSeconds.getAsLong();
		byte[] plain = scratch.plain;
		for (int i = 0; i < 8; i++) {
			plain[i] = (byte) (endpointId >>> (56 - 8 * i));
		}
		for (int i = 0; i < 4; i++) {
			plain[8 + i] = (byte) (issued >>> (24 - 8 * i));
		}
		plain[12] = plain[13] = plain[14] = plain[15] = 0;
		scratch.encrypt(0, plain, scratch.block);
		scratch.mac(0, this.service, scratch.block);
		char[] value = new char[LENGTH];
		encode(scratch.block, value, 0);
		encode(scratch.out, value, CHARS);
		return new String(value);
	}

	/**
	 * Returns which secret signed {@code value}: 0 for the current one, 1 for the first
	 * previous one and so on, or {@link #REJECTED}, or {@link #EXPIRED}.
	 * @param value a cookie value, any text
	 * @return the index of the secret, {@link #REJECTED} or {@link #EXPIRED}
	 */
	public int check(CharSequence value) {
		return check(value, 0, value.length());
	}

	/**
	 * Returns which secret signed the value at {@code start} to {@code end} of
	 * {@code text}, as {@link #check(CharSequence)} does, read in place: a request's
	 * {@code Cookie} line is checked without copying the value out of it. A value
	 * accepted leaves its endpoint id and age on this thread's scratch.
	 * @param text text that holds a cookie value, any text
	 * @param start where the value starts
	 * @param end where it ends
	 * @return the index of the secret, {@link #REJECTED} or {@link #EXPIRED}
	 */
	public int check(CharSequence text, int start, int end) {
		if (end - start != LENGTH) {
			return REJECTED;
		}
		Scratch scratch = this.scratch.get();
		if (!decode(text, start, scratch.block) || !decode(text, start + CHARS, scratch.given)) {
			return REJECTED;
		}
		for (int key = 0; key < this.keys.size(); key++) {
			scratch.mac(key, this.service, scratch.block);
			if (sameMac(scratch.out, scratch.given)) {
				return read(scratch, key);
			}
		}
		return REJECTED;
	}

	/**
	 * Reads the block a MAC of key {@code key} vouched for: an id, an issue time and
	 * zeros, else {@link #REJECTED} (cannot happen but with the secret: the MAC matched).
	 */
	private int read(Scratch scratch, int key) {
		byte[] plain = scratch.plain;
		scratch.decrypt(key, scratch.block, plain);
		if ((plain[12] | plain[13] | plain[14] | plain[15]) != 0) {
			return REJECTED;
		}
		long id = 0;
		for (int i = 0; i < 8; i++) {
			id = (id << 8) | (plain[i] & 0xff);
		}
		long issued = 0;
		for (int i = 8; i < 12; i++) {
			issued = (issued << 8) | (plain[i] & 0xff);
		}
		long age = this.epochSeconds.getAsLong() - issued;
		if (age > this.lifetimeSeconds || age < -MAX_CLOCK_SKEW_SECONDS) {
			return EXPIRED;
		}
		scratch.checkedId = id;
		scratch.checkedAge = Math.max(0, age);
		return key;
	}

	/**
	 * Returns the endpoint id of the value this thread's last {@link #check} accepted.
	 * @return the endpoint's id
	 */
	public long checkedEndpointId() {
		return this.scratch.get().checkedId;
	}

	/**
	 * Returns how many seconds ago the value this thread's last {@link #check} accepted
	 * was issued: a session past half its lifetime gets a fresh value.
	 * @return the age in seconds
	 */
	public long checkedAgeSeconds() {
		return this.scratch.get().checkedAge;
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
	 * Writes 16 bytes as {@value #CHARS} base64url characters: five groups of three
	 * bytes, then the last byte as two characters whose last four bits are zero.
	 */
	private static void encode(byte[] bytes, char[] into, int offset) {
		int at = offset;
		for (int i = 0; i < 15; i += 3) {
			int bits = ((bytes[i] & 0xff) << 16) | ((bytes[i + 1] & 0xff) << 8) | (bytes[i + 2] & 0xff);
			into[at++] = BASE64URL[(bits >>> 18) & 0x3f];
			into[at++] = BASE64URL[(bits >>> 12) & 0x3f];
			into[at++] = BASE64URL[(bits >>> 6) & 0x3f];
			into[at++] = BASE64URL[bits & 0x3f];
		}
		int last = bytes[15] & 0xff;
		into[at++] = BASE64URL[last >>> 2];
		into[at] = BASE64URL[(last & 0x3) << 4];
	}

	/**
	 * Reads {@value #CHARS} base64url characters into 16 bytes; false for a character
	 * outside the alphabet or a last character with bits the encoding leaves zero (one
	 * value, one spelling).
	 */
	private static boolean decode(CharSequence value, int offset, byte[] into) {
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
	 * The two keys one secret gives: the MAC's (the secret itself) and the block cipher's
	 * (the first 128 bits of an HMAC of a label under the secret, so that neither key
	 * tells anything of the other).
	 */
	private record Keys(SecretKeySpec mac, SecretKeySpec cipher) {

		static Keys of(byte[] secret, String what) {
			if (secret.length < MIN_SECRET_BYTES) {
				throw new IllegalArgumentException(
						what + ": " + secret.length + " bytes (expected: at least " + MIN_SECRET_BYTES + ")");
			}
			SecretKeySpec mac = new SecretKeySpec(secret, MAC_ALGORITHM);
			try {
				Mac derive = Mac.getInstance(MAC_ALGORITHM);
				derive.init(mac);
				byte[] derived = derive.doFinal(CIPHER_KEY_LABEL);
				return new Keys(mac, new SecretKeySpec(derived, 0, BLOCK_BYTES, "AES"));
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException("the JDK has no " + MAC_ALGORITHM, ex);
			}
		}

	}

	/**
	 * One thread's MACs and ciphers, one of each per secret, its buffers, and what its
	 * last accepted check read.
	 */
	private static final class Scratch {

		private final Mac[] macs;

		private final Cipher[] encrypt;

		private final Cipher[] decrypt;

		private final byte[] separator = new byte[1];

		private final byte[] out = new byte[32];

		private final byte[] given = new byte[MAC_BYTES];

		private final byte[] block = new byte[BLOCK_BYTES];

		private final byte[] plain = new byte[BLOCK_BYTES];

		private long checkedId;

		private long checkedAge;

		Scratch(List<Keys> keys) {
			this.macs = new Mac[keys.size()];
			this.encrypt = new Cipher[keys.size()];
			this.decrypt = new Cipher[keys.size()];
			try {
				for (int i = 0; i < this.macs.length; i++) {
					this.macs[i] = Mac.getInstance(MAC_ALGORITHM);
					this.macs[i].init(keys.get(i).mac());
					this.encrypt[i] = Cipher.getInstance(CIPHER);
					this.encrypt[i].init(Cipher.ENCRYPT_MODE, keys.get(i).cipher());
					this.decrypt[i] = Cipher.getInstance(CIPHER);
					this.decrypt[i].init(Cipher.DECRYPT_MODE, keys.get(i).cipher());
				}
			}
			catch (InvalidKeyException ex) {
				throw new IllegalArgumentException("affinity secret: " + ex.getMessage(), ex);
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException("the JDK has no " + MAC_ALGORITHM + " or " + CIPHER, ex);
			}
		}

		/**
		 * Computes the MAC of key {@code key} over the service, a zero byte and the block
		 * (the zero byte keeps a service name from running into the block) into
		 * {@link #out}.
		 */
		void mac(int key, byte[] service, byte[] block) {
			Mac mac = this.macs[key];
			mac.update(service);
			mac.update(this.separator);
			mac.update(block);
			try {
				mac.doFinal(this.out, 0);
			}
			catch (ShortBufferException ex) {
				throw new IllegalStateException(ex);
			}
		}

		void encrypt(int key, byte[] plain, byte[] into) {
			run(this.encrypt[key], plain, into);
		}

		void decrypt(int key, byte[] block, byte[] into) {
			run(this.decrypt[key], block, into);
		}

		private static void run(Cipher cipher, byte[] in, byte[] out) {
			try {
				// One block, no padding: the output is the 16 bytes given, no allocation.
				cipher.doFinal(in, 0, BLOCK_BYTES, out, 0);
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}

package dev.gatewaylb.internal.bus;

import dev.gatewaylb.bus.FleetEvent;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

/**
 * What a replica lets in from its fleet's bus, and what it stamps on what it sends: the
 * fleet's name, the signature (with a secret), valid fields, a version not from the
 * future, an event id not seen before, and, per subject (a rollout, an endpoint's drain),
 * a version newer than the last decision taken or followed about it. Plain Java: no bus
 * here, so every rule is tested as a function.
 * <p>
 * Called from the bus's consumer thread and from the threads that decide (the control
 * thread, an actuator request); the two memories are small synchronized maps, as events
 * are rare (decisions, not requests).
 */
public final class FleetInbox {

	/**
	 * Why an event was dropped; the label is the meter's tag.
	 */
	enum Rejection {

		/**
		 * For another fleet on the same broker.
		 */
		OTHER_FLEET,

		/**
		 * Without a signature, where this replica has a secret.
		 */
		UNSIGNED,

		/**
		 * Signed with another secret, or altered on the way.
		 */
		BAD_SIGNATURE,

		/**
		 * A field missing, too long or not printable, or a version from the future.
		 */
		INVALID,

		/**
		 * An event already taken (a broker's redelivery, a replay).
		 */
		DUPLICATE,

		/**
		 * About a subject this replica already has a newer decision on.
		 */
		STALE,

		/**
		 * Older than {@link FleetInbox#MAX_EVENT_AGE}: a replay of an event captured long
		 * ago, whose id this replica no longer remembers.
		 */
		EXPIRED;

		String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	/**
	 * How many event ids, and subjects' versions, are remembered.
	 */
	static final int REMEMBERED = 4096;

	/**
	 * The furthest ahead of this replica's clock an event's version may be.
	 */
	static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(10);

	/**
	 * The oldest an event's version may be: a decision travels in a second; one an hour
	 * old was captured and sent again, and the ids remembered against replays
	 * ({@value #REMEMBERED}) may no longer hold its own.
	 */
	static final Duration MAX_EVENT_AGE = Duration.ofHours(1);

	private static final String MAC = "HmacSHA256";

	private final String fleet;

	/**
	 * The keys in force, replaced whole by a refresh of the secrets ({@link #rekey}):
	 * events read one set, never half of two.
	 */
	private volatile Keys keys;

	private final FleetClock clock;

	private final Map<String, Boolean> seen = remembered();

	private final Map<String, Long> versions = remembered();

	private final Map<Rejection, LongAdder> rejected = new EnumMap<>(Rejection.class);

	/**
	 * Creates the inbox.
	 * @param fleet the fleet's name
	 * @param secret the fleet's secret, or {@code null} to neither sign nor check
	 * @param previousSecrets secrets whose signatures are still accepted
	 * @param clock this replica's clock
	 */
	FleetInbox(String fleet, @Nullable String secret, List<String> previousSecrets, FleetClock clock) {
		this.fleet = fleet;
		this.keys = Keys.of(secret, previousSecrets);
		this.clock = clock;
		for (Rejection rejection : Rejection.values()) {
			this.rejected.put(rejection, new LongAdder());
		}
	}

	/**
	 * Signs an event this replica sends, when it has a secret.
	 */
	<E extends FleetEvent> E sign(E event) {
		SecretKeySpec key = this.keys.signing();
		if (key != null) {
			event.setSignature(Base64.getUrlEncoder().withoutPadding().encodeToString(mac(key, event)));
		}
		return event;
	}

	/**
	 * Puts new secrets in force (a refresh during a rotation): events are signed with
	 * {@code secret} from now on, and checked against it and the previous ones.
	 * @param secret the fleet's secret, or {@code null} to neither sign nor check
	 * @param previousSecrets secrets whose signatures are still accepted
	 */
	void rekey(@Nullable String secret, List<String> previousSecrets) {
		this.keys = Keys.of(secret, previousSecrets);
	}

	/**
	 * Checks an event from another replica; one that passes has its id remembered and
	 * moves this replica's clock past its version.
	 * @return why it is dropped, or {@code null} to take it
	 */
	@Nullable Rejection admit(FleetEvent event) {
		Rejection rejection = check(event);
		if (rejection != null) {
			this.rejected.get(rejection).increment();
		}
		return rejection;
	}

	/**
	 * Takes a version for a subject, if it is newer than the one remembered: a decision
	 * taken here, or followed from another replica.
	 * @return whether it was newer; a stale one is counted
	 */
	boolean advance(String subject, long version) {
		synchronized (this.versions) {
			Long known = this.versions.get(subject);
			if (known != null && known >= version) {
				this.rejected.get(Rejection.STALE).increment();
				return false;
			}
			this.versions.put(subject, version);
			return true;
		}
	}

	/**
	 * Returns the version of the last decision about a subject, 0 when none is known.
	 */
	long version(String subject) {
		synchronized (this.versions) {
			Long known = this.versions.get(subject);
			return (known != null) ? known : 0;
		}
	}

	/**
	 * Returns how many events were dropped for a reason.
	 */
	long rejected(Rejection rejection) {
		return this.rejected.get(rejection).sum();
	}

	static String rolloutSubject(String split, String plan) {
		return "rollout " + split.toLowerCase(Locale.ROOT) + " " + plan;
	}

	static String drainSubject(String service, String endpoint) {
		return "drain " + service.toLowerCase(Locale.ROOT) + " " + endpoint;
	}

	private @Nullable Rejection check(FleetEvent event) {
		if (!this.fleet.equals(event.getFleet())) {
			return Rejection.OTHER_FLEET;
		}
		Keys keys = this.keys;
		if (keys.signing() != null) {
			String signature = event.getSignature();
			if (signature == null || signature.isEmpty()) {
				return Rejection.UNSIGNED;
			}
			if (!signedBy(keys, event, signature)) {
				return Rejection.BAD_SIGNATURE;
			}
		}
		if (!FleetEvent.isName(event.getId()) || !FleetEvent.isName(event.getOriginService())
				|| event.invalidField() != null || event.getVersion() <= 0
				|| this.clock.isFarAhead(event.getVersion(), MAX_CLOCK_SKEW.toMillis())) {
			return Rejection.INVALID;
		}
		if (this.clock.isFarBehind(event.getVersion(), MAX_EVENT_AGE.toMillis())) {
			return Rejection.EXPIRED;
		}
		synchronized (this.seen) {
			if (this.seen.put(event.getId(), Boolean.TRUE) != null) {
				return Rejection.DUPLICATE;
			}
		}
		this.clock.observe(event.getVersion());
		return null;
	}

	private static boolean signedBy(Keys keys, FleetEvent event, String signature) {
		byte[] given;
		try {
			given = Base64.getUrlDecoder().decode(signature);
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
		boolean signed = false;
		for (SecretKeySpec key : keys.verifying()) {
			// Constant time: the comparison must not tell how many leading bytes matched;
			// every key is tried, so neither does the time tell which one did.
			signed |= MessageDigest.isEqual(mac(key, event), given);
		}
		return signed;
	}

	private static byte[] mac(SecretKeySpec key, FleetEvent event) {
		try {
			// A Mac is not thread-safe, and events are rare: one per event.
			Mac mac = Mac.getInstance(MAC);
			mac.init(key);
			return mac.doFinal(signedText(event).getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException | InvalidKeyException ex) {
			// Every JDK has HmacSHA256 (a required algorithm of the platform).
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Returns the text a signature covers: the event's type, its bus envelope (id,
	 * origin, destination), fleet, version and own fields, each with its length, so that
	 * no two events share a text.
	 */
	static String signedText(FleetEvent event) {
		StringBuilder text = new StringBuilder("gateway-lb fleet event 1\n");
		field(text, event.getClass().getSimpleName());
		field(text, event.getId());
		field(text, event.getOriginService());
		field(text, event.getDestinationService());
		field(text, event.getFleet());
		field(text, Long.toString(event.getVersion()));
		List<@Nullable String> fields = event.signedFields();
		for (String value : fields) {
			field(text, value);
		}
		return text.toString();
	}

	private static void field(StringBuilder text, @Nullable String value) {
		if (value == null) {
			text.append("-\n");
		}
		else {
			text.append(value.length()).append(':').append(value).append('\n');
		}
	}

	private static <V> Map<String, V> remembered() {
		return new LinkedHashMap<>(64, 0.75f, false) {

			@Override
			protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
				return size() > REMEMBERED;
			}

		};
	}

	/**
	 * The key events are signed with, or {@code null} for none, and every key a signature
	 * is accepted from: that one, then the previous ones.
	 */
	private record Keys(@Nullable SecretKeySpec signing, List<SecretKeySpec> verifying) {

		static Keys of(@Nullable String secret, List<String> previousSecrets) {
			if (secret == null) {
				return new Keys(null, List.of());
			}
			List<SecretKeySpec> verifying = new ArrayList<>();
			verifying.add(key(secret));
			previousSecrets.forEach((previous) -> verifying.add(key(previous)));
			return new Keys(verifying.get(0), List.copyOf(verifying));
		}

		private static SecretKeySpec key(String secret) {
			return new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), MAC);
		}

	}

}

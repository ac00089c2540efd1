package dev.gatewaylb.bus;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.bus.event.Destination;
import org.springframework.cloud.bus.event.RemoteApplicationEvent;

/**
 * What every gateway-lb event on the bus carries besides its own fields: the fleet it is
 * for ({@code gateway.lb.fleet.name}), the version of the decision (a hybrid logical
 * clock, the fleet clock), and, with {@code gateway.lb.fleet.secret}, an HMAC-SHA256
 * signature over all of it (checked by the fleet's inbox). Serialized as JSON by Spring
 * Cloud Bus; the setters are Jackson's.
 */
public abstract class FleetEvent extends RemoteApplicationEvent {

	/**
	 * The longest name, id or address a field may hold.
	 */
	static final int MAX_NAME_LENGTH = 256;

	/**
	 * The longest reason.
	 */
	static final int MAX_REASON_LENGTH = 1024;

	private String fleet = "";

	private long version;

	private @Nullable String signature;

	/**
	 * For Jackson.
	 */
	protected FleetEvent() {
	}

	/**
	 * Creates the event.
	 * @param source the publisher
	 * @param origin this replica's bus id
	 * @param destination the replicas it is for
	 * @param fleet the fleet's name
	 * @param version the decision's version
	 */
	FleetEvent(Object source, String origin, Destination destination, String fleet, long version) {
		super(source, origin, destination);
		this.fleet = fleet;
		this.version = version;
	}

	public String getFleet() {
		return this.fleet;
	}

	public void setFleet(String fleet) {
		this.fleet = fleet;
	}

	public long getVersion() {
		return this.version;
	}

	public void setVersion(long version) {
		this.version = version;
	}

	public @Nullable String getSignature() {
		return this.signature;
	}

	public void setSignature(@Nullable String signature) {
		this.signature = signature;
	}

	/**
	 * Returns the event's own fields, in a fixed order, as the signature covers them.
	 * @return the fields' values, {@code null} for a field not set
	 */
	public abstract List<@Nullable String> signedFields();

	/**
	 * Returns the name of the first of the event's own fields that is missing, too long
	 * or not printable.
	 * @return the field's name, or {@code null} when all are valid
	 */
	public abstract @Nullable String invalidField();

	/**
	 * Returns whether a field holds a name: set, at most {@value #MAX_NAME_LENGTH}
	 * characters, none of them a control character (a line break must not forge a log
	 * line) or a space.
	 */
	public static boolean isName(@Nullable String value) {
		if (value == null || value.isEmpty() || value.length() > MAX_NAME_LENGTH) {
			return false;
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == ' ' || Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns whether a field holds a reason: unset, or at most
	 * {@value #MAX_REASON_LENGTH} characters (any: a reason is escaped where it is
	 * logged).
	 */
	static boolean isReason(@Nullable String value) {
		return value == null || value.length() <= MAX_REASON_LENGTH;
	}

}

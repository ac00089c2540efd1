package dev.gatewaylb.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Who may reach the management context, under {@code gateway.lb.actuator}.
 *
 * @param allowedHosts Host names the management context answers beyond loopback names
 * (localhost, *.localhost) and IP literals, each a name or *.domain for every name under
 * it, without scheme or port. A request to the management context (its base path on a
 * shared port, everything on a port of its own) whose Host header names anything else is
 * answered 403, reads included: a page whose own name was re-pointed at the gateway (DNS
 * rebinding) names its own host. Add the names that monitoring and operators use (a
 * Kubernetes service name that Prometheus scrapes, say).
 */
public record ActuatorProperties(@Nullable List<String> allowedHosts) {

	/**
	 * An actuator block that sets nothing.
	 */
	public static final ActuatorProperties NONE = new ActuatorProperties(null);

	public ActuatorProperties {
		List<String> names = new ArrayList<>();
		if (allowedHosts != null) {
			for (int i = 0; i < allowedHosts.size(); i++) {
				String entry = allowedHosts.get(i);
				String name = (entry != null) ? entry.trim().toLowerCase(Locale.ROOT) : "";
				if (!isHostPattern(name)) {
					throw new IllegalArgumentException("allowed-hosts[" + i + "]: '" + entry
							+ "' (expected: a host name, or *.domain for the names under it, without scheme or port)");
				}
				names.add(name.endsWith(".") ? name.substring(0, name.length() - 1) : name);
			}
		}
		allowedHosts = List.copyOf(names);
	}

	@Override
	public List<String> allowedHosts() {
		return (this.allowedHosts != null) ? this.allowedHosts : List.of();
	}

	/**
	 * Returns whether {@code name} (lower case) is a DNS name, optionally with a leading
	 * {@code *.} label and a trailing dot: labels of letters, digits and inner hyphens
	 * (underscores too, which some internal names carry), at most 63 characters each.
	 */
	static boolean isHostPattern(String name) {
		String rest = name.startsWith("*.") ? name.substring(2) : name;
		if (rest.endsWith(".")) {
			rest = rest.substring(0, rest.length() - 1);
		}
		if (rest.isEmpty() || rest.length() > 253) {
			return false;
		}
		int labelStart = 0;
		for (int i = 0; i <= rest.length(); i++) {
			if (i == rest.length() || rest.charAt(i) == '.') {
				int length = i - labelStart;
				if (length == 0 || length > 63 || rest.charAt(labelStart) == '-' || rest.charAt(i - 1) == '-') {
					return false;
				}
				labelStart = i + 1;
				continue;
			}
			char c = rest.charAt(i);
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
				return false;
			}
		}
		return true;
	}

}

package dev.gatewaylb.kubernetes;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The Kubernetes Service a gateway-lb service's endpoints come from, and which of its
 * ports: by default the Service of the same name (the id in lower case) in the
 * discovery's namespace, on its only port, or else the port named {@code http}.
 *
 * @param namespace the Service's namespace
 * @param service the Service's name
 * @param port the port's name or number as written
 * ({@code gateway.lb.services.<id>.kubernetes.port}), or {@code null} for the default
 */
record ServiceTarget(String namespace, String service, @Nullable String port) {

	/**
	 * The port name a Service with several ports is balanced on when none is named.
	 */
	static final String DEFAULT_PORT_NAME = "http";

	/**
	 * Returns the target of a service id whose block names none of its own.
	 * @param serviceId the gateway-lb service id
	 * @param namespace the discovery's namespace
	 * @return the Service of the same name, on its default port
	 */
	static ServiceTarget of(String serviceId, String namespace) {
		return new ServiceTarget(namespace, serviceId.toLowerCase(Locale.ROOT), null);
	}

	/**
	 * Returns the port number the target names, or -1 when it names a port by name or
	 * names none.
	 */
	int portNumber() {
		String port = this.port;
		if (port == null || port.isEmpty() || !Character.isDigit(port.charAt(0))) {
			return -1;
		}
		return Integer.parseInt(port);
	}

	/**
	 * Returns whether a value is a Kubernetes name of at most {@code max} characters:
	 * lower-case letters, digits and '-', starting and ending with a letter or digit.
	 */
	static boolean isLabel(String value, int max) {
		if (value.isEmpty() || value.length() > max) {
			return false;
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean alphanumeric = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
			if (!alphanumeric && (c != '-' || i == 0 || i == value.length() - 1)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Checks a port as written: a number from 1 to 65535, or a port name (at most 15
	 * lower-case letters, digits and '-').
	 * @param key the property, for the message
	 * @param port the value
	 * @throws IllegalArgumentException naming the key and the value when it is neither
	 */
	static void checkPort(String key, String port) {
		if (!port.isEmpty() && Character.isDigit(port.charAt(0))) {
			int number;
			try {
				number = Integer.parseInt(port);
			}
			catch (NumberFormatException ex) {
				number = -1;
			}
			if (number >= 1 && number <= 65535) {
				return;
			}
		}
		else if (isLabel(port, 15)) {
			return;
		}
		throw new IllegalArgumentException(key + ": '" + port
				+ "' (expected: a port number from 1 to 65535, or the name of a port of the Service)");
	}

}

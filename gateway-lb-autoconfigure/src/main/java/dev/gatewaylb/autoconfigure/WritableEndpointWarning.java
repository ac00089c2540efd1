package dev.gatewaylb.autoconfigure;

import java.util.Locale;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;

/**
 * Warns once at start-up when the {@code gatewaylb} endpoint's writes (drain, rollout
 * actions) are open on the application's own port: anyone who reaches the gateway could
 * then drain its endpoints. The endpoint is read-only by default; the warning is for the
 * configuration that opened it without moving management to a port of its own.
 */
final class WritableEndpointWarning implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(WritableEndpointWarning.class);

	private final Environment environment;

	WritableEndpointWarning(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (writableOnApplicationPort(this.environment)) {
			logger.warn("The gatewaylb actuator endpoint is writable (management.endpoint.gatewaylb.access: "
					+ "unrestricted) on the application's own port: anyone who reaches the gateway can drain its "
					+ "endpoints and act on its rollouts. Set management.server.port to a port only operators reach "
					+ "(docs/security.md)");
		}
	}

	/**
	 * Returns whether the endpoint's writes are open on the port the gateway serves.
	 * @param environment the environment
	 * @return whether to warn
	 */
	static boolean writableOnApplicationPort(Environment environment) {
		String access = environment.getProperty("management.endpoint.gatewaylb.access",
				environment.getProperty("management.endpoints.access.default", "read-only"));
		if (!"unrestricted".equals(access.trim().toLowerCase(Locale.ROOT))) {
			return false;
		}
		String managementPort = environment.getProperty("management.server.port");
		if (managementPort == null) {
			return true;
		}
		managementPort = managementPort.trim();
		if (managementPort.equals("0") || managementPort.equals("-1")) {
			// A random port of its own, or no HTTP management at all.
			return false;
		}
		return managementPort.equals(environment.getProperty("server.port", "8080").trim());
	}

}

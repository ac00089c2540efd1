package dev.gatewaylb.internal.autoconfigure;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The versions of the libraries the gateway runs on, read from their jars, and the known
 * bugs of some of them that the start-up acts on or warns of (docs/transports.md).
 */
final class HostVersions {

	/**
	 * The first Reactor Netty release whose server never stops reading a keep-alive
	 * connection: before it, a request that arrives while the previous one on its
	 * connection is still ending, and that is answered at once (a 503 of a service with
	 * no endpoint, a shed request, a 404), can leave the connection unread, and the next
	 * request on it waits for its client's timeout (reactor/reactor-netty#4361). No
	 * setting avoids it; Spring Boot 4.0.7 manages 1.3.6.
	 */
	static final int[] REACTOR_NETTY_KEEP_ALIVE_FIXED_IN = { 1, 3, 8 };

	private HostVersions() {
	}

	/**
	 * Returns Netty's version as its jars declare it, or {@code null}.
	 */
	static @Nullable String nettyVersion(ClassLoader classLoader) {
		try {
			Class<?> version = Class.forName("io.netty.util.Version", false, classLoader);
			Map<?, ?> versions = (Map<?, ?>) version.getMethod("identify", ClassLoader.class).invoke(null, classLoader);
			Object common = versions.get("netty-common");
			return (common != null) ? String.valueOf(version.getMethod("artifactVersion").invoke(common)) : null;
		}
		catch (ReflectiveOperationException | LinkageError | RuntimeException ex) {
			return null;
		}
	}

	/**
	 * Returns the version of Reactor Netty's HTTP module as its jar's manifest declares
	 * it, or {@code null} (not on the classpath, or repackaged without its manifest).
	 */
	static @Nullable String reactorNettyVersion(ClassLoader classLoader) {
		try {
			Package server = Class.forName("reactor.netty.http.server.HttpServer", false, classLoader).getPackage();
			return (server != null) ? server.getImplementationVersion() : null;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return null;
		}
	}

	/**
	 * Returns whether Reactor Netty's server, at {@code version}, can stop reading a
	 * keep-alive connection ({@link #REACTOR_NETTY_KEEP_ALIVE_FIXED_IN}); an unknown
	 * version is taken to be fine.
	 */
	static boolean stallsKeepAlive(@Nullable String reactorNettyVersion) {
		return reactorNettyVersion != null && before(reactorNettyVersion, REACTOR_NETTY_KEEP_ALIVE_FIXED_IN);
	}

	/**
	 * Returns whether {@code version} ({@code major.minor.patch[.qualifier]}) is before
	 * {@code fixed}; an unreadable version is not.
	 */
	static boolean before(String version, int[] fixed) {
		String[] parts = version.split("[.-]");
		for (int i = 0; i < fixed.length; i++) {
			int part;
			try {
				part = (i < parts.length) ? Integer.parseInt(parts[i]) : 0;
			}
			catch (NumberFormatException ex) {
				return false;
			}
			if (part != fixed[i]) {
				return part < fixed[i];
			}
		}
		return false;
	}

}

package dev.gatewaylb.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Arrays;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Moves the demo backends to free ephemeral ports, so a test never collides with a sample
 * already running on 9001-9003 or with another test's context.
 */
final class FreePorts {

	private FreePorts() {
	}

	/**
	 * Registers a free port for each of {@code demo.backends.alpha-port},
	 * {@code beta-port} and {@code gamma-port}.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 */
	static void registerBackendPorts(DynamicPropertyRegistry registry) {
		// The registry calls its suppliers on every read: pick each port once. Sorted,
		// so that alpha, beta and gamma keep the order they have on 9001-9003: balancers
		// order endpoints by address, and the weighted sequence the tests expect is that
		// of alpha, beta, gamma in this order.
		int[] ports = { freePort(), freePort(), freePort() };
		Arrays.sort(ports);
		registry.add("demo.backends.alpha-port", () -> ports[0]);
		registry.add("demo.backends.beta-port", () -> ports[1]);
		registry.add("demo.backends.gamma-port", () -> ports[2]);
	}

	/**
	 * Returns a port that was free a moment ago on this machine.
	 * @return the port
	 */
	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}

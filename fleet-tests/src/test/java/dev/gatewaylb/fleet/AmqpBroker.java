package dev.gatewaylb.fleet;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.apache.qpid.server.SystemLauncher;
import org.apache.qpid.server.SystemLauncherListener;
import org.apache.qpid.server.model.Broker;
import org.apache.qpid.server.model.Port;
import org.apache.qpid.server.model.SystemConfig;
import org.jspecify.annotations.Nullable;

/**
 * The AMQP 0-9-1 broker of the fleet tests' bus, found once per JVM: the one
 * {@code -Dfleet.broker=amqp://HOST:PORT} names; else a broker that answers on
 * {@code 127.0.0.1:5672} (the RabbitMQ {@code .ci/run} starts); else Apache Qpid Broker-J
 * started in this JVM on a free loopback port, its messages in memory, so that
 * {@code mvn -B verify} needs nothing but a JDK and Maven.
 * {@code -Dfleet.broker=embedded} always starts the embedded one. Either way user
 * {@code guest}, password {@code guest}.
 */
final class AmqpBroker {

	static final String PROPERTY = "fleet.broker";

	private static final InetSocketAddress LOCAL_DEFAULT = new InetSocketAddress("127.0.0.1", 5672);

	private static @Nullable AmqpBroker found;

	private final String host;

	private final int port;

	private final String description;

	private AmqpBroker(String host, int port, String description) {
		this.host = host;
		this.port = port;
		this.description = description;
	}

	/**
	 * Returns the broker the fleet tests use, starting the embedded one the first time it
	 * is needed.
	 * @return the broker
	 * @throws Unavailable when the named broker does not answer, or none answers and the
	 * embedded one cannot start
	 */
	static synchronized AmqpBroker get() throws Unavailable {
		if (found == null) {
			found = find(System.getProperty(PROPERTY, ""));
			System.out.println("FLEET bus broker: " + found.description);
		}
		return found;
	}

	private static AmqpBroker find(String named) throws Unavailable {
		if (!named.isEmpty() && !named.equals("embedded")) {
			URI uri = URI.create(named);
			if (!"amqp".equals(uri.getScheme()) || uri.getHost() == null) {
				throw new Unavailable("-D" + PROPERTY + "=" + named + " is not amqp://HOST:PORT or embedded", true);
			}
			int port = (uri.getPort() != -1) ? uri.getPort() : 5672;
			InetSocketAddress address = new InetSocketAddress(uri.getHost(), port);
			if (!answersAmqp(address)) {
				throw new Unavailable("no AMQP broker answers on " + uri.getHost() + ":" + port + " (-D" + PROPERTY
						+ "=" + named + "); start it, or leave the property out for the embedded broker", true);
			}
			return new AmqpBroker(uri.getHost(), port, named);
		}
		if (named.isEmpty() && answersAmqp(LOCAL_DEFAULT)) {
			return new AmqpBroker("127.0.0.1", 5672, "the broker answering on 127.0.0.1:5672");
		}
		try {
			int port = startEmbedded();
			return new AmqpBroker("127.0.0.1", port, "embedded Qpid Broker-J on 127.0.0.1:" + port);
		}
		catch (Exception ex) {
			throw new Unavailable("no AMQP broker on 127.0.0.1:5672 and the embedded one could not start: " + ex,
					!named.isEmpty());
		}
	}

	String host() {
		return this.host;
	}

	int port() {
		return this.port;
	}

	/**
	 * Returns whether an AMQP 0-9-1 broker answers at {@code address}: it answers the
	 * protocol header with a method frame (type 1, {@code connection.start}), as the
	 * check in {@code .ci/run} expects.
	 */
	static boolean answersAmqp(InetSocketAddress address) {
		try (Socket socket = new Socket()) {
			socket.connect(address, 1_000);
			socket.setSoTimeout(2_000);
			OutputStream out = socket.getOutputStream();
			out.write("AMQP".getBytes(StandardCharsets.US_ASCII));
			out.write(new byte[] { 0, 0, 9, 1 });
			out.flush();
			InputStream in = socket.getInputStream();
			return in.read() == 1;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Starts Broker-J with {@code embedded-broker.json}: one AMQP 0-9-1 port on loopback,
	 * bound to a port the system chooses, and one in-memory virtual host. Stopped, and
	 * its work directory removed, when the JVM exits.
	 * @return the bound port
	 */
	private static int startEmbedded() throws Exception {
		URL config = AmqpBroker.class.getResource("/embedded-broker.json");
		if (config == null) {
			throw new IllegalStateException("embedded-broker.json is not on the class path");
		}
		Path work = Files.createTempDirectory("fleet-broker");
		AtomicReference<SystemConfig<?>> system = new AtomicReference<>();
		SystemLauncher launcher = new SystemLauncher(new SystemLauncherListener.DefaultSystemLauncherListener() {

			@Override
			public void onContainerResolve(SystemConfig<?> resolved) {
				system.set(resolved);
			}

		});
		Map<String, Object> attributes = new HashMap<>();
		attributes.put(SystemConfig.TYPE, "Memory");
		attributes.put(SystemConfig.INITIAL_CONFIGURATION_LOCATION, config.toExternalForm());
		attributes.put(SystemConfig.STARTUP_LOGGED_TO_SYSTEM_OUT, false);
		attributes.put(SystemConfig.CONTEXT, Map.of(SystemConfig.QPID_WORK_DIR, work.toString()));
		launcher.startup(attributes);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			launcher.shutdown();
			delete(work);
		}, "fleet-broker-shutdown"));
		Broker<?> broker = (Broker<?>) system.get().getContainer();
		for (Port<?> port : broker.getPorts()) {
			if (port.getBoundPort() > 0) {
				return port.getBoundPort();
			}
		}
		throw new IllegalStateException("the embedded broker started without a bound AMQP port");
	}

	private static void delete(Path directory) {
		try (Stream<Path> paths = Files.walk(directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// a temporary directory: the system cleans it some day
		}
	}

	/**
	 * No broker for the bus: the message says what was looked for, where, and how to
	 * provide one.
	 */
	static final class Unavailable extends Exception {

		private final boolean requested;

		Unavailable(String message, boolean requested) {
			super(message);
			this.requested = requested;
		}

		/**
		 * Returns whether {@code -Dfleet.broker} asked for the broker that is missing:
		 * then the tests fail rather than skip.
		 */
		boolean requested() {
			return this.requested;
		}

	}

}

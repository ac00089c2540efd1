package dev.gatewaylb.internal.autoconfigure;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

/**
 * Sets what gateway-lb needs of its host before anything starts (the last two once per
 * JVM):
 * <ul>
 * <li>Shortens Spring Cloud LoadBalancer's instance cache from 35 s to 5 s unless the
 * application sets {@code spring.cloud.loadbalancer.cache.ttl} itself: a discovery client
 * that announces no changes should not hide a new or removed instance for half a minute.
 * Added last, so every other property source wins.</li>
 * <li>Turns off io_uring's multishot poll on Netty versions that lose reads with it
 * ({@link IoUringReadWorkaround}), unless the application chose a value itself.</li>
 * <li>Warns of a Reactor Netty whose server can stop reading a keep-alive connection
 * ({@link HostVersions#REACTOR_NETTY_KEEP_ALIVE_FIXED_IN}): nothing but an upgrade avoids
 * it.</li>
 * </ul>
 */
public final class GatewayLbEnvironmentPostProcessor implements EnvironmentPostProcessor {

	static final String SOURCE_NAME = "gatewayLbDefaults";

	static final String CACHE_TTL = "spring.cloud.loadbalancer.cache.ttl";

	/**
	 * Whether the checks of the host's libraries ran: they are about the class path and
	 * the JVM's system properties, not about one environment, so they run and log once.
	 * Spring Cloud's refresh ({@code /actuator/refresh}) runs every post-processor again
	 * on a copy of the environment, which repeated the WARN at each refresh.
	 */
	private static final AtomicBoolean hostChecked = new AtomicBoolean();

	private final Log logger;

	/**
	 * Creates the post-processor.
	 * @param logFactory Spring Boot's log factory for code that runs before logging is
	 * set up
	 */
	public GatewayLbEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(GatewayLbEnvironmentPostProcessor.class);
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("gateway.lb.enabled", Boolean.class, true)
				|| environment.getPropertySources().contains(SOURCE_NAME)) {
			return;
		}
		environment.getPropertySources().addLast(new MapPropertySource(SOURCE_NAME, Map.of(CACHE_TTL, "5s")));
		if (!hostChecked.compareAndSet(false, true)) {
			return;
		}
		ClassLoader classLoader = (application.getClassLoader() != null) ? application.getClassLoader()
				: ClassUtils.getDefaultClassLoader();
		boolean ioUring = ClassUtils.isPresent("io.netty.channel.uring.IoUring", classLoader);
		String nettyVersion = ioUring ? HostVersions.nettyVersion(classLoader) : null;
		if (IoUringReadWorkaround.applies(ioUring, nettyVersion, System.getProperty(IoUringReadWorkaround.PROPERTY))) {
			System.setProperty(IoUringReadWorkaround.PROPERTY, "false");
			this.logger.info("Netty " + nettyVersion + " with io_uring on the classpath: set "
					+ IoUringReadWorkaround.PROPERTY + "=false, which avoids lost reads on reused connections "
					+ "(netty/netty#17049, fixed in Netty 4.2.17); set it yourself to choose");
		}
		String reactorNettyVersion = HostVersions.reactorNettyVersion(classLoader);
		if (HostVersions.stallsKeepAlive(reactorNettyVersion)) {
			this.logger.warn("Reactor Netty " + reactorNettyVersion + " can stop reading a keep-alive connection "
					+ "after a request the gateway answers at once (a 503, a 404), and the next request on it "
					+ "then waits for its client's timeout (reactor/reactor-netty#4361, fixed in 1.3.8): "
					+ "manage io.projectreactor.netty:reactor-netty-http and reactor-netty-core 1.3.8 or later, "
					+ "with Netty 4.2.18 or later (gateway-lb's docs/transports.md)");
		}
	}

}

package dev.gatewaylb.internal.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * Decides whether to turn off io_uring's multishot poll, the trigger of a Netty bug that
 * loses reads on reused keep-alive connections: with Netty before 4.2.17 on io_uring, an
 * upstream's whole response can sit unread in the gateway's socket while the client waits
 * for its timeout, at about 1 request in 1,000 (netty/netty#17049, fixed in 4.2.17).
 * Spring Boot 4.0.7 manages Netty 4.2.15, and a RabbitMQ client on the classpath (Spring
 * Cloud Bus) brings the io_uring transport, which Reactor Netty then prefers.
 * <p>
 * The switch is Netty's own system property, {@value #PROPERTY}, read once when Netty's
 * io_uring support loads; a value the application sets itself is never changed.
 * docs/transports.md has the details.
 */
public final class IoUringReadWorkaround {

	static final String PROPERTY = "io.netty.iouring.pollAddMultishotEnabled";

	/**
	 * The first Netty release with the fix.
	 */
	static final int[] FIXED_IN = { 4, 2, 17 };

	private IoUringReadWorkaround() {
	}

	/**
	 * Returns whether the workaround applies.
	 * @param ioUringPresent whether Netty's io_uring transport is on the classpath
	 * @param nettyVersion Netty's version, such as {@code 4.2.15.Final}, or {@code null}
	 * when unknown
	 * @param property the current value of {@value #PROPERTY}, or {@code null}
	 * @return whether to set {@value #PROPERTY} to {@code false}
	 */
	static boolean applies(boolean ioUringPresent, @Nullable String nettyVersion, @Nullable String property) {
		return ioUringPresent && property == null && nettyVersion != null
				&& HostVersions.before(nettyVersion, FIXED_IN);
	}

}

package dev.gatewaylb.internal.websocket;

import java.time.Duration;

import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.internal.config.Layers;

/**
 * What a service's drained endpoints' open connections are given ({@code drain}).
 *
 * @param websocketGraceNanos how long the WebSocket sessions of an endpoint that drains,
 * or leaves the service, are left to close on their own before they are closed with 1001;
 * 0 leaves them open
 */
public record DrainSettings(long websocketGraceNanos) {

	/**
	 * The built-in defaults of the {@code drain} block: sessions left open.
	 */
	public static final ServiceProperties.Drain BUILT_IN = new ServiceProperties.Drain(Duration.ZERO);

	/**
	 * Sessions left open.
	 */
	public static final DrainSettings NONE = new DrainSettings(0);

	/**
	 * Returns whether a drained endpoint's sessions are ever closed.
	 * @return whether {@code websocket-grace} is above 0
	 */
	public boolean closesSessions() {
		return this.websocketGraceNanos > 0;
	}

	/**
	 * Maps a service's {@code drain} block.
	 * @param drain the block's layers
	 * @return the settings
	 */
	public static DrainSettings map(Layers.Group<ServiceProperties.Drain> drain) {
		return new DrainSettings(drain.get(ServiceProperties.Drain::websocketGrace).toNanos());
	}

}

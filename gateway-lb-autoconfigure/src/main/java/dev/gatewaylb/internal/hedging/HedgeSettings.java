package dev.gatewaylb.internal.hedging;

import java.util.Set;
import java.time.Duration;
import java.util.List;
import dev.gatewaylb.config.HedgeProperties;
import dev.gatewaylb.internal.config.Layers;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * A service's hedged (backup) requests.
 *
 * @param maxExtraLoad backups as a fraction of requests, 0 to 1; 0 is off
 * @param minDelayNanos the shortest wait before a backup
 * @param methods the methods hedged, upper case
 */
public record HedgeSettings(double maxExtraLoad, long minDelayNanos, Set<String> methods) {

	public HedgeSettings {
		methods = Set.copyOf(methods);
	}

	/**
	 * Returns whether requests of a method are hedged.
	 * @param method the method's name, as the request gives it
	 * @return whether hedged
	 */
	public boolean hedges(String method) {
		return this.methods.contains(method);
	}

	/**
	 * Returns whether the service hedges.
	 * @return whether {@code max-extra-load} is above 0
	 */
	/**
	 * Returns whether a request is hedged: a method of {@code hedge.methods}, no body (a
	 * backup must send it again), not a WebSocket upgrade.
	 * @param request the request
	 * @return whether hedged
	 */
	public boolean hedges(ServerHttpRequest request) {
		HttpHeaders headers = request.getHeaders();
		boolean body = headers.getContentLength() > 0 || headers.containsHeader(HttpHeaders.TRANSFER_ENCODING);
		return hedges(request.getMethod().name()) && !body && !"websocket".equalsIgnoreCase(headers.getUpgrade());
	}

	public boolean enabled() {
		return this.maxExtraLoad > 0;
	}

	/**
	 * The built-in defaults of the {@code hedge} block: off.
	 */
	public static final HedgeProperties BUILT_IN = new HedgeProperties(0.0, Duration.ofMillis(5),
			List.of("GET", "HEAD", "OPTIONS"));

	/**
	 * Maps a service's {@code hedge} block.
	 * @param hedge the block's layers
	 * @return the settings
	 */
	public static HedgeSettings map(Layers.Group<HedgeProperties> hedge) {
		return new HedgeSettings(hedge.get(HedgeProperties::maxExtraLoad),
				hedge.get(HedgeProperties::minDelay).toNanos(), Set.copyOf(hedge.get(HedgeProperties::methods)));
	}

}

package dev.gatewaylb.internal.autoconfigure;

import java.util.List;

import dev.gatewaylb.internal.affinity.AffinityState;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.locality.LocalityState;
import dev.gatewaylb.internal.loadreports.LoadReportsState;
import dev.gatewaylb.internal.mirror.MirrorState;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.runtime.ServiceFeature;
import dev.gatewaylb.internal.settings.ServiceSettings;
import dev.gatewaylb.internal.websocket.WebSocketState;

/**
 * The features every service's runtime holds, each bound to its block of the service's
 * settings: the one list a new feature is added to (docs/architecture.md, adding a
 * feature).
 */
public final class Features {

	private static final List<ServiceFeature<?, ?>> ALL = List.of(
			ServiceFeature.of(HedgeState.FEATURE, ServiceSettings::hedge),
			ServiceFeature.of(OverloadState.FEATURE, ServiceSettings::concurrency),
			ServiceFeature.of(AffinityState.FEATURE, ServiceSettings::affinity),
			ServiceFeature.of(LocalityState.FEATURE, (settings) -> settings.balancer().levels()),
			ServiceFeature.of(MirrorState.FEATURE, ServiceSettings::mirror),
			ServiceFeature.of(LoadReportsState.FEATURE, ServiceSettings::loadReports),
			ServiceFeature.of(WebSocketState.FEATURE, ServiceSettings::drain));

	private Features() {
	}

	/**
	 * Returns every feature, in the order their states are kept.
	 * @return the features
	 */
	public static List<ServiceFeature<?, ?>> all() {
		return ALL;
	}

}

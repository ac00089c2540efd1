package dev.gatewaylb.gateway;

import java.util.Objects;

import dev.gatewaylb.balance.BalancerSettings;

/**
 * The resolved settings of one service: its own keys merged over the defaults.
 *
 * @param balancer the balancer's settings
 * @param hashKey where a consistent-hash key comes from
 */
public record ServiceSettings(BalancerSettings balancer, HashKey hashKey) {

	/**
	 * The settings of a service when nothing is configured.
	 */
	public static final ServiceSettings DEFAULTS = new ServiceSettings(BalancerSettings.DEFAULTS, HashKey.CLIENT_IP);

	public ServiceSettings {
		Objects.requireNonNull(balancer, "balancer");
		Objects.requireNonNull(hashKey, "hashKey");
	}

}

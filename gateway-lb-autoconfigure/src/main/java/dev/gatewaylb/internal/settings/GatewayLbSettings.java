package dev.gatewaylb.internal.settings;

import java.util.HashSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.request.Cidr;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;

/**
 * The runtime form of {@code gateway.lb}: immutable, built once per configuration
 * generation by {@link #bind}, read by every pick. Service ids match case-insensitively,
 * as discovery services (Eureka's upper-case ids, DNS names) spell them either way. Two
 * settings are equal when every value in them is, so a refresh can tell whether anything
 * changed.
 */
public final class GatewayLbSettings {

	private final ServiceSettings defaults;

	private final Map<String, ServiceSettings> services;

	private final Map<String, SplitSettings> splits;

	private final List<Cidr> trustedProxies;

	private final GatewayLbProperties properties;

	private final FleetSettings fleet;

	private final DnsSettings dns;

	private final List<String> allowedHosts;

	GatewayLbSettings(ServiceSettings defaults, Map<String, ServiceSettings> services,
			Map<String, SplitSettings> splits, List<Cidr> trustedProxies, GatewayLbProperties properties,
			FleetSettings fleet, DnsSettings dns, List<String> allowedHosts) {
		this.defaults = Objects.requireNonNull(defaults, "defaults");
		this.services = Map.copyOf(services);
		this.splits = Map.copyOf(splits);
		this.trustedProxies = List.copyOf(trustedProxies);
		this.properties = Objects.requireNonNull(properties, "properties");
		this.fleet = Objects.requireNonNull(fleet, "fleet");
		this.dns = Objects.requireNonNull(dns, "dns");
		this.allowedHosts = List.copyOf(allowedHosts);
	}

	/**
	 * Binds {@code gateway.lb} from an environment, validates it and the weights declared
	 * for Spring Cloud's simple discovery client, and maps it to runtime settings. The
	 * one entry point for start-up and refresh, so that both accept and reject exactly
	 * the same configuration.
	 * @param environment the environment
	 * @return the settings
	 * @throws BindException naming the property and value when a value is invalid on its
	 * own
	 * @throws InvalidConfigurationPropertyValueException naming the property when a rule
	 * across keys fails, a trusted CA bundle cannot be read, or a simple discovery weight
	 * is invalid
	 */
	public static GatewayLbSettings bind(Environment environment) {
		GatewayLbProperties properties = GatewayLbPropertiesBinder.bind(environment);
		SimpleDiscoveryWeights.validate(environment);
		return SettingsMapper.map(properties, environment.getProperty(SettingsMapper.ZONE_PROPERTY));
	}

	/**
	 * Maps bound properties to runtime settings and checks the rules that span entries.
	 * Prefer {@link #bind}, which also validates the simple discovery client's weights.
	 * @param properties the properties as bound, each service holding only the keys it
	 * sets
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the property when a
	 * trusted CA bundle cannot be read, a split has no positive weight, targets another
	 * split, or shares its name with a service entry
	 */
	public static GatewayLbSettings from(GatewayLbProperties properties) {
		return SettingsMapper.map(properties);
	}

	/**
	 * Returns the settings of a service: its own, or the defaults.
	 * @param serviceId the id in {@code lb://<id>}
	 * @return the settings
	 */
	public ServiceSettings forService(String serviceId) {
		return this.services.getOrDefault(SettingsMapper.normalize(serviceId), this.defaults);
	}

	/**
	 * Returns the ids of the services with their own settings, in lower case.
	 * @return the configured service ids
	 */
	public Set<String> configuredServices() {
		return this.services.keySet();
	}

	/**
	 * Returns the services that the services' settings name
	 * ({@link ServiceSettings#namedService()}), in lower case: tracked from start-up as
	 * the services routes name are.
	 * @return the service ids
	 */
	public Set<String> namedServices() {
		Set<String> targets = new HashSet<>();
		for (ServiceSettings service : this.services.values()) {
			String target = service.namedService();
			if (target != null) {
				targets.add(target);
			}
		}
		return targets;
	}

	/**
	 * Returns the split called {@code name}.
	 * @param name the host of an {@code lb://} URI
	 * @return the split, or {@code null} when {@code name} is not a split
	 */
	public @Nullable SplitSettings split(String name) {
		return this.splits.get(SettingsMapper.normalize(name));
	}

	/**
	 * Returns every split by its lower-case name.
	 * @return the splits
	 */
	public Map<String, SplitSettings> splits() {
		return this.splits;
	}

	/**
	 * Returns the networks whose X-Forwarded-For is believed.
	 * @return the trusted proxies
	 */
	public List<Cidr> trustedProxies() {
		return this.trustedProxies;
	}

	/**
	 * Returns {@code gateway.lb} as bound, each service holding only the keys it sets:
	 * what these settings were mapped from, for {@code /actuator/configprops}. Runtime
	 * code reads the settings, never this.
	 * @return the properties
	 */
	public GatewayLbProperties properties() {
		return this.properties;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof GatewayLbSettings that && this.defaults.equals(that.defaults)
				&& this.services.equals(that.services) && this.splits.equals(that.splits)
				&& this.trustedProxies.equals(that.trustedProxies) && this.allowedHosts.equals(that.allowedHosts)
				&& this.fleet.equals(that.fleet) && this.dns.equals(that.dns);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.defaults, this.services, this.splits, this.trustedProxies, this.allowedHosts,
				this.fleet, this.dns);
	}

	@Override
	public String toString() {
		return "GatewayLbSettings[defaults=" + this.defaults + ", services=" + this.services + ", splits=" + this.splits
				+ ", trustedProxies=" + this.trustedProxies + ", allowedHosts=" + this.allowedHosts + "]";
	}

	/**
	 * Returns the keys read only at start-up whose value differs in {@code next} (the
	 * fleet channel's name and what it follows, the resolver's settings): a refresh that
	 * changes one is refused, naming them, rather than shown as applied and not acted on.
	 * @param next the settings of a refresh
	 * @return the keys, empty when none differs
	 */
	public List<String> startUpKeysChangedIn(GatewayLbSettings next) {
		List<String> changed = new ArrayList<>(this.fleet.startUpKeysChangedIn(next.fleet));
		changed.addAll(this.dns.keysChangedIn(next.dns));
		return changed;
	}

	/**
	 * Returns the fleet channel's settings; the channel takes them at start-up but for
	 * its secrets, which a refresh changes live.
	 * @return the settings
	 */
	public FleetSettings fleet() {
		return this.fleet;
	}

	/**
	 * Returns how hostname endpoints are resolved; the upstreams' resolver takes them at
	 * start-up.
	 * @return the settings
	 */
	public DnsSettings dns() {
		return this.dns;
	}

	/**
	 * Returns the host names the management context answers beyond loopback names and IP
	 * literals ({@code gateway.lb.actuator.allowed-hosts}), lower case, {@code *.domain}
	 * for the names under it. Live: the guard reads it per request.
	 * @return the names
	 */
	public List<String> allowedHosts() {
		return this.allowedHosts;
	}

}

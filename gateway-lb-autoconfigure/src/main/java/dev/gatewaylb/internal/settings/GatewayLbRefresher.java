package dev.gatewaylb.internal.settings;

import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;

/**
 * Re-binds {@code gateway.lb} when Spring Cloud reports changed keys under it
 * ({@code /actuator/refresh}, Spring Cloud Bus, or any {@link EnvironmentChangeEvent}),
 * and puts the result in force if it is valid and differs from the settings in force. An
 * invalid result is rejected whole: the previous settings keep serving, and the error is
 * logged once and kept as the live settings' last error.
 * <p>
 * Records bound through their constructor are not re-bound in place by Spring Cloud's
 * rebinder, hence this listener.
 */
public final class GatewayLbRefresher implements ApplicationListener<EnvironmentChangeEvent> {

	private static final Log logger = LogFactory.getLog(GatewayLbRefresher.class);

	private static final String PREFIX = "gateway.lb.";

	private final Environment environment;

	private final LiveSettings settings;

	/**
	 * Creates the refresher.
	 * @param environment the environment to re-bind from
	 * @param settings the live settings to update
	 */
	public GatewayLbRefresher(Environment environment, LiveSettings settings) {
		this.environment = environment;
		this.settings = settings;
	}

	@Override
	public void onApplicationEvent(EnvironmentChangeEvent event) {
		if (event.getKeys().stream().anyMatch((key) -> key.startsWith(PREFIX))) {
			refresh();
		}
	}

	/**
	 * Re-binds {@code gateway.lb} now, through {@link GatewayLbSettings#bind}, the entry
	 * point start-up uses too.
	 * @return whether the refresh was valid: {@code false} when it was rejected and the
	 * previous settings stay in force, {@code true} when its settings are in force,
	 * whether or not they differ from the previous ones
	 */
	public boolean refresh() {
		GatewayLbSettings next;
		try {
			next = GatewayLbSettings.bind(this.environment);
		}
		catch (RuntimeException ex) {
			String error = describe(ex);
			if (!error.equals(this.settings.lastError())) {
				logger.warn("Rejected a refresh of gateway.lb, the previous settings stay in force: " + error);
			}
			this.settings.reject(error);
			return false;
		}
		List<String> startUpOnly = this.settings.get().startUpKeysChangedIn(next);
		if (!startUpOnly.isEmpty()) {
			String error = String.join(", ", startUpOnly)
					+ ": read at start-up only; restart the gateway to change it (the values in force stay)";
			if (!error.equals(this.settings.lastError())) {
				logger.warn("Rejected a refresh of gateway.lb, the previous settings stay in force: " + error);
			}
			this.settings.reject(error);
			return false;
		}
		if (this.settings.apply(next)) {
			logger.info("Applied a refresh of gateway.lb (generation " + this.settings.generation() + ")");
		}
		else {
			logger.info("A refresh of gateway.lb left the settings unchanged (generation " + this.settings.generation()
					+ ")");
		}
		return true;
	}

	/**
	 * Returns the messages of an exception and its causes: Boot's binding exceptions name
	 * the property, their causes the value and the expectation.
	 */
	static String describe(Throwable ex) {
		StringBuilder message = new StringBuilder();
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t.getMessage() != null && message.indexOf(t.getMessage()) < 0) {
				message.append((message.length() > 0) ? ": " : "").append(t.getMessage());
			}
		}
		return message.toString();
	}

}

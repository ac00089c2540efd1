package dev.gatewaylb.internal.autoconfigure;

import java.util.List;

import dev.gatewaylb.internal.actuate.ManagementGuard;
import dev.gatewaylb.internal.settings.LiveSettings;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The management guard ({@link ManagementGuard}), in whichever context serves the
 * actuator, whatever endpoints are exposed: the application's own, where it guards the
 * actuator's base path, or the management server's when {@code management.server.port}
 * differs, where it guards every request. Not with {@code gateway.lb.enabled: false}
 * (plain Spring Cloud Gateway, the benchmarks' peer).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "gateway.lb.enabled", matchIfMissing = true)
public class ManagementGuardConfiguration {

	@Bean
	ManagementGuard gatewayLbManagementGuard(ApplicationContext context, ObjectProvider<LiveSettings> settings,
			ObjectProvider<PathMappedEndpoints> endpoints) {
		boolean ownPort = WebServerApplicationContext.hasServerNamespace(context, "management");
		return new ManagementGuard(() -> {
			LiveSettings live = settings.getIfAvailable();
			return (live != null) ? live.get().allowedHosts() : List.of();
		}, ownPort, () -> {
			PathMappedEndpoints mapped = endpoints.getIfAvailable();
			return (mapped != null) ? mapped.getBasePath() : null;
		});
	}

}

package dev.gatewaylb.internal.autoconfigure;

import dev.gatewaylb.internal.actuate.GatewayLbDashboard;
import dev.gatewaylb.internal.actuate.GatewayLbEndpoint;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * The dashboard's mapping, in whichever context serves the actuator: the application's
 * own, or the management server's when {@code management.server.port} differs. Loaded
 * only where the {@code gatewaylb} endpoint is available; it serves the page only at the
 * endpoint's path, read from the exposed endpoints each time, so a path mapping or base
 * path is followed.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnAvailableEndpoint(GatewayLbEndpoint.class)
public class GatewayLbDashboardConfiguration {

	@Bean
	GatewayLbDashboard gatewayLbDashboard(ObjectProvider<PathMappedEndpoints> endpoints) {
		EndpointId id = EndpointId.of("gatewaylb");
		return new GatewayLbDashboard(() -> {
			PathMappedEndpoints mapped = endpoints.getIfAvailable();
			return (mapped != null) ? mapped.getPath(id) : null;
		});
	}

}

package dev.gatewaylb.fleet;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Eureka server in this JVM (Spring Cloud Netflix's, on Tomcat, on a random
 * loopback port), and its REST API as a registering service would call it: register an
 * instance with a weight, change the weight, deregister.
 * <p>
 * The server answers from a read-only response cache refreshed every 30 s by default;
 * here, as docs/fleet.md advises, it is refreshed every 500 ms.
 */
final class EurekaRegistry implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private final HttpClient http = HttpClient.newHttpClient();

	private final String base;

	private EurekaRegistry(ConfigurableApplicationContext context) {
		this.context = context;
		int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
		this.base = "http://127.0.0.1:" + port + "/eureka";
	}

	static EurekaRegistry start() {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(Server.class)
			.web(WebApplicationType.SERVLET)
			.properties("server.port=0", "server.address=127.0.0.1", "spring.application.name=eureka",
					"eureka.client.register-with-eureka=false", "eureka.client.fetch-registry=false",
					"eureka.server.enable-self-preservation=false",
					"eureka.server.response-cache-update-interval-ms=500",
					// A registry of one: no peer to replicate to (the default is
					// localhost:8761).
					"eureka.client.service-url.defaultZone=http://127.0.0.1:9/eureka/",
					"eureka.server.registry-sync-retries=0",
					// The server is not a gateway: none of the gateway's
					// auto-configuration.
					"spring.cloud.gateway.server.webflux.enabled=false", "gateway.lb.enabled=false",
					"spring.autoconfigure.exclude=org.springframework.cloud.gateway.config.GatewayFunctionAutoConfiguration,"
							+ "org.springframework.cloud.gateway.config.GatewayStreamAutoConfiguration",
					"spring.cloud.bus.enabled=false")
			.run();
		return new EurekaRegistry(context);
	}

	/**
	 * Returns the URL a Eureka client's {@code eureka.client.service-url.defaultZone}
	 * takes.
	 */
	String serviceUrl() {
		return this.base + "/";
	}

	/**
	 * Registers a backend as an instance of {@code app}, up, with its weight in the
	 * metadata as gateway-lb reads it.
	 */
	void register(String app, Backend backend, int weight) {
		String json = """
				{"instance": {
				  "instanceId": "%2$s", "app": "%1$s", "hostName": "127.0.0.1", "ipAddr": "127.0.0.1",
				  "vipAddress": "%3$s", "secureVipAddress": "%3$s", "status": "UP",
				  "port": {"$": %4$d, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"},
				  "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
				  "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 300},
				  "metadata": {"weight": "%5$d"}
				}}"""
			.formatted(app.toUpperCase(Locale.ROOT), backend.name(), app.toLowerCase(Locale.ROOT), backend.port(),
					weight);
		send(HttpRequest.newBuilder(URI.create(this.base + "/apps/" + app.toUpperCase(Locale.ROOT)))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json)), 204);
	}

	/**
	 * Changes an instance's weight through the metadata API.
	 */
	void weight(String app, Backend backend, int weight) {
		send(HttpRequest
			.newBuilder(URI.create(this.base + "/apps/" + app.toUpperCase(Locale.ROOT) + "/" + backend.name()
					+ "/metadata?weight=" + weight))
			.PUT(HttpRequest.BodyPublishers.noBody()), 200);
	}

	/**
	 * Deregisters an instance, as a service shutting down cleanly does.
	 */
	void deregister(String app, Backend backend) {
		send(HttpRequest
			.newBuilder(URI.create(this.base + "/apps/" + app.toUpperCase(Locale.ROOT) + "/" + backend.name()))
			.DELETE(), 200);
	}

	private void send(HttpRequest.Builder request, int expected) {
		try {
			HttpResponse<String> response = this.http.send(request.timeout(Duration.ofSeconds(10)).build(),
					HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != expected) {
				throw new IllegalStateException(request.build().method() + " " + request.build().uri() + ": "
						+ response.statusCode() + " " + response.body());
			}
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		this.context.close();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableEurekaServer
	static class Server {

	}

}

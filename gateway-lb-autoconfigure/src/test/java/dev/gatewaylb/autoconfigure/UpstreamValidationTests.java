package dev.gatewaylb.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.netty.http.client.HttpClient;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Start-up validation of the per-upstream pool, timeout and TLS settings: each bad value
 * fails start-up with a message that names the property and the value.
 */
class UpstreamValidationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(gatewayLbAutoConfigurations()))
		.withConfiguration(AutoConfigurations.of(LoadBalancerAutoConfiguration.class))
		.withBean(HttpClient.class, HttpClient::create)
		.withBean(HttpClientProperties.class)
		.withBean(ServerProperties.class);

	@ParameterizedTest(name = "{0}.{1}={2}")
	@CsvSource(delimiter = '|', textBlock = """
			gateway.lb.defaults         | pool.max-connections  | 0                          | expected: 1 to 65536
			gateway.lb.services.catalog | pool.max-connections  | -2                         | expected: 1 to 65536
			gateway.lb.defaults         | pool.max-pending      | 0                          | expected: 1 to 65536
			gateway.lb.services.catalog | pool.max-pending      | -1                         | expected: 1 to 65536
			gateway.lb.defaults         | pool.pending-timeout  | -1s                        |
			gateway.lb.services.catalog | pool.max-idle-time    | -30s                       |
			gateway.lb.defaults         | timeouts.connect      | -500ms                     |
			gateway.lb.services.catalog | timeouts.response     | -1s                        |
			gateway.lb.defaults         | timeouts.body-idle    | -100ms                     |
			gateway.lb.services.catalog | timeouts.request-body-idle | -1s                   | expected: 0s to 1d
			gateway.lb.services.catalog | tls.trusted-ca        | classpath:tls/missing.pem  |
			gateway.lb.defaults         | tls.trusted-ca        | file:/nonexistent/ca.pem   |
			gateway.lb.services.catalog | tls.trusted-ca        | classpath:tls/not-a-certificate.pem |
			gateway.lb.services.catalog | tls.trusted-ca        | classpath:tls/server-key.pem |
			gateway.lb.services.catalog | tls.trusted-ca        | classpath:tls/empty.pem    |
			""")
	void failsStartUpOnAnInvalidUpstreamSettingNamingPropertyAndValue(String scope, String key, String value,
			String expectation) {
		this.runner.withPropertyValues(scope + "." + key + "=" + value).run((context) -> {
			assertThat(context).hasFailed();
			String messages = messages(context.getStartupFailure());
			assertThat(namesProperty(messages, scope, key)).as("names %s.%s in:%n%s", scope, key, messages).isTrue();
			assertThat(messages).contains(value);
			if (expectation != null) {
				assertThat(messages).contains(expectation);
			}
		});
	}

	@Test
	void startsWithEveryUpstreamSettingValid() {
		this.runner
			.withPropertyValues("gateway.lb.defaults.pool.max-connections=2", "gateway.lb.defaults.pool.max-pending=3",
					"gateway.lb.defaults.pool.pending-timeout=0s", "gateway.lb.defaults.pool.max-idle-time=10s",
					"gateway.lb.defaults.timeouts.connect=500ms", "gateway.lb.defaults.timeouts.response=0s",
					"gateway.lb.defaults.timeouts.body-idle=0s", "gateway.lb.services.catalog.pool.max-connections=1",
					"gateway.lb.services.catalog.tls.trusted-ca=classpath:tls/ca.pem",
					"gateway.lb.services.catalog.http2=true", "gateway.lb.services.catalog.timeouts.body-idle=300ms",
					"gateway.lb.defaults.timeouts.request-body-idle=0s",
					"gateway.lb.services.catalog.timeouts.request-body-idle=1s")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * Returns whether the messages name {@code scope.key}, whole or as Boot splits it:
	 * the object that failed to bind ({@code gateway.lb.defaults.pool}) and, in its
	 * message, the rest ({@code max-connections}).
	 */
	private static boolean namesProperty(String messages, String scope, String key) {
		String property = scope + "." + key;
		for (int dot = property.indexOf('.', scope.length()); dot >= 0; dot = property.indexOf('.', dot + 1)) {
			if (messages.contains(property.substring(0, dot)) && messages.contains(property.substring(dot + 1))) {
				return true;
			}
		}
		return messages.contains(property);
	}

	/**
	 * Returns gateway-lb's auto-configurations as the starter registers them, so that a
	 * check made by any of them counts.
	 */
	private static Class<?>[] gatewayLbAutoConfigurations() {
		ClassLoader classLoader = UpstreamValidationTests.class.getClassLoader();
		List<Class<?>> classes = new ArrayList<>();
		for (String name : ImportCandidates.load(AutoConfiguration.class, classLoader)) {
			if (name.startsWith("dev.gatewaylb.")) {
				classes.add(ClassUtils.resolveClassName(name, classLoader));
			}
		}
		return classes.toArray(new Class<?>[0]);
	}

	private static String messages(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			messages.append(t.getMessage()).append('\n');
		}
		return messages.toString();
	}

}

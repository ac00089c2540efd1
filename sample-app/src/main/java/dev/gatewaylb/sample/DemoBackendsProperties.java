package dev.gatewaylb.sample;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configures the embedded demo backends ({@code demo.backends.*}).
 * <p>
 * The discovery entries in {@code application.yml} read the same ports, so changing a
 * port here moves both the backend and the address the gateway sends to.
 *
 * @param enabled whether to start the demo backends alpha, beta and gamma
 * @param alphaPort port of the alpha backend on 127.0.0.1
 * @param betaPort port of the beta backend on 127.0.0.1
 * @param gammaPort port of the gamma backend on 127.0.0.1
 */
@ConfigurationProperties("demo.backends")
public record DemoBackendsProperties(@DefaultValue("true") boolean enabled, @DefaultValue("9001") int alphaPort,
		@DefaultValue("9002") int betaPort, @DefaultValue("9003") int gammaPort) {

}

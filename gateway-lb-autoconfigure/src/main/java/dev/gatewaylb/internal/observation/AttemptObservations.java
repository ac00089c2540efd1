package dev.gatewaylb.internal.observation;

import java.util.Locale;

import dev.gatewaylb.internal.balance.Algorithm;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * Starts the {@code gateway.lb.attempt} observations of the gateway's attempts, in the
 * application's registry. There is none when the application has no registry
 * ({@link #of}); with one, each exchange asks {@link #active()} once (a registry without
 * handlers, or with none yet, records nothing) and holds {@code null} when it is not: its
 * request path then reads one field to learn that it observes nothing.
 */
public final class AttemptObservations {

	/**
	 * The Reactor context key of the current observation (Micrometer's
	 * {@code ObservationThreadLocalAccessor.KEY}, which Spring Cloud Gateway reads by the
	 * same literal): named here so that the class, which needs context propagation on the
	 * classpath, is never loaded for it.
	 */
	public static final String CONTEXT_KEY = "micrometer.observation";

	/**
	 * The algorithms' names as configured ({@code round-robin}), by ordinal: made once.
	 */
	private static final String[] ALGORITHMS = new String[Algorithm.values().length];

	static {
		for (Algorithm algorithm : Algorithm.values()) {
			ALGORITHMS[algorithm.ordinal()] = algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-');
		}
	}

	private final ObservationRegistry registry;

	private AttemptObservations(ObservationRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Returns the observations for a registry, or {@code null} for none.
	 * @param registry the application's registry, or {@code null} for none
	 * @return the observations, or {@code null}
	 */
	public static @Nullable AttemptObservations of(@Nullable ObservationRegistry registry) {
		return (registry == null || registry == ObservationRegistry.NOOP) ? null : new AttemptObservations(registry);
	}

	/**
	 * Returns whether the registry records anything now. Asked per exchange, not once:
	 * Spring Boot gives the registry its handlers as their beans are made, which may be
	 * after the gateway's filters got it. One read of the handlers' list.
	 * @return whether attempts are observed
	 */
	public boolean active() {
		return !this.registry.isNoop();
	}

	/**
	 * Returns the observation a Reactor context carries, the exchange's (Spring's
	 * {@code http.server.requests}), or {@code null}: what an attempt's observation is a
	 * child of.
	 * @param context the exchange's Reactor context, as Spring Cloud Gateway keeps it in
	 * the exchange, or {@code null}
	 * @return the observation, or {@code null}
	 */
	public static @Nullable Observation current(@Nullable ContextView context) {
		return (context != null) ? context.getOrDefault(CONTEXT_KEY, null) : null;
	}

	/**
	 * Returns an algorithm's name as configured.
	 * @param algorithm the algorithm
	 * @return its name, {@code round-robin} say
	 */
	public static String name(Algorithm algorithm) {
		return ALGORITHMS[algorithm.ordinal()];
	}

	/**
	 * Starts the observation of an attempt.
	 * @param context the attempt's context
	 * @param parent the exchange's observation, or {@code null}
	 * @return the observation, started
	 */
	public Observation start(AttemptContext context, @Nullable Observation parent) {
		Observation observation = Observation.createNotStarted(null, AttemptConvention.INSTANCE, () -> context,
				this.registry);
		if (parent != null) {
			observation.parentObservation(parent);
		}
		return observation.start();
	}

	/**
	 * Records a request shed before any attempt: an observation that starts and stops at
	 * once, its outcome {@code shed}.
	 * @param context the context, its endpoint empty
	 * @param parent the exchange's observation, or {@code null}
	 * @param reason why it was shed
	 */
	public void shed(AttemptContext context, @Nullable Observation parent, String reason) {
		Observation observation = start(context, parent);
		context.ended("shed", reason);
		observation.stop();
	}

}

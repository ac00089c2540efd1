package dev.gatewaylb.internal.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and keys of the {@code gateway.lb.attempt} observation (docs/observability.md).
 * Low cardinality, on the timer too: the service, the algorithm, the kind and the
 * outcome. High cardinality, on the span only: the endpoint, the attempt's number, the
 * split's target, the rollout and the reason.
 */
public final class AttemptConvention implements ObservationConvention<AttemptContext> {

	/** The observation's name. */
	public static final String NAME = "gateway.lb.attempt";

	static final AttemptConvention INSTANCE = new AttemptConvention();

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(AttemptContext context) {
		return "gateway-lb " + context.kind() + " " + context.service();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(AttemptContext context) {
		return KeyValues.of(KeyValue.of("gateway.lb.service", context.service()),
				KeyValue.of("gateway.lb.algorithm", context.algorithm()),
				KeyValue.of("gateway.lb.kind", context.kind()), KeyValue.of("gateway.lb.outcome", context.outcome()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(AttemptContext context) {
		KeyValues values = KeyValues.of(KeyValue.of("gateway.lb.endpoint", context.endpoint()),
				KeyValue.of("gateway.lb.attempt", Integer.toString(context.number())));
		String target = context.splitTarget();
		if (target != null) {
			values = values.and("gateway.lb.split.target", target);
		}
		String rollout = context.rollout();
		if (rollout != null) {
			values = values.and("gateway.lb.rollout", rollout);
		}
		String reason = context.reason();
		if (reason != null) {
			values = values.and("gateway.lb.reason", reason);
		}
		return values;
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof AttemptContext;
	}

}

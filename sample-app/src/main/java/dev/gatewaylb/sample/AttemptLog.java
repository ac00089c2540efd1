package dev.gatewaylb.sample;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.tracing.handler.TracingObservationHandler;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Logs each of gateway-lb's attempts as it ends, with its trace id: where the request
 * went, what kind of attempt it was and how it ended. An application would rather send
 * the spans to its tracing system; this shows, in the sample's console, what the spans
 * say.
 */
class AttemptLog implements ObservationHandler<Observation.Context> {

	private static final Log logger = LogFactory.getLog(AttemptLog.class);

	// Asked before the observation has its name: the name is looked at when it stops.
	@Override
	public boolean supportsContext(Observation.Context context) {
		return true;
	}

	@Override
	public void onStop(Observation.Context context) {
		if (!"gateway.lb.attempt".equals(context.getName()) || !logger.isInfoEnabled()) {
			return;
		}
		TracingObservationHandler.TracingContext tracing = context.get(TracingObservationHandler.TracingContext.class);
		String trace = (tracing != null && tracing.getSpan() != null) ? tracing.getSpan().context().traceId() : "-";
		logger.info("trace=" + trace + " service=" + value(context, "gateway.lb.service") + " attempt="
				+ value(context, "gateway.lb.attempt") + " kind=" + value(context, "gateway.lb.kind") + " endpoint="
				+ value(context, "gateway.lb.endpoint") + " outcome=" + value(context, "gateway.lb.outcome"));
	}

	private static String value(Observation.Context context, String key) {
		KeyValue value = context.getLowCardinalityKeyValue(key);
		if (value == null) {
			value = context.getHighCardinalityKeyValue(key);
		}
		return (value != null) ? value.getValue() : "-";
	}

}

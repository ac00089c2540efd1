package dev.gatewaylb.internal.exchange;

import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The {@code http.client.requests} observation Spring Cloud Gateway's request header
 * filter starts for one attempt, stopped once whoever stops it: the response header
 * filter when the attempt's headers arrive, the gateway's exception handler when an error
 * reaches it, or the attempt's routing when it ends without headers (failed before them,
 * or cancelled: a hedged race's loser, a client gone), which neither of the others hears
 * of. Put in the exchange's attribute in place of the one it wraps, so that all three
 * stop it through here.
 */
public final class AttemptObservation implements Observation {

	private final Observation delegate;

	private final AtomicBoolean stopped = new AtomicBoolean();

	public AttemptObservation(Observation delegate) {
		this.delegate = delegate;
	}

	/**
	 * Stops the observation of an attempt that ended without its headers, with the error
	 * it failed with, if any; nothing when it was stopped already.
	 * @param error the error, or {@code null} for a cancellation
	 */
	public void endedWithoutHeaders(@Nullable Throwable error) {
		if (!this.stopped.get()) {
			if (error != null) {
				this.delegate.error(error);
			}
			stop();
		}
	}

	@Override
	public void stop() {
		if (this.stopped.compareAndSet(false, true)) {
			this.delegate.stop();
		}
	}

	@Override
	public Observation contextualName(@Nullable String contextualName) {
		this.delegate.contextualName(contextualName);
		return this;
	}

	@Override
	public Observation parentObservation(@Nullable Observation parentObservation) {
		this.delegate.parentObservation(parentObservation);
		return this;
	}

	@Override
	public Observation lowCardinalityKeyValue(KeyValue keyValue) {
		this.delegate.lowCardinalityKeyValue(keyValue);
		return this;
	}

	@Override
	public Observation highCardinalityKeyValue(KeyValue keyValue) {
		this.delegate.highCardinalityKeyValue(keyValue);
		return this;
	}

	@Override
	public Observation observationConvention(ObservationConvention<?> observationConvention) {
		this.delegate.observationConvention(observationConvention);
		return this;
	}

	@Override
	public Observation error(Throwable error) {
		this.delegate.error(error);
		return this;
	}

	@Override
	public Observation event(Event event) {
		this.delegate.event(event);
		return this;
	}

	@Override
	public Observation start() {
		this.delegate.start();
		return this;
	}

	@Override
	public Context getContext() {
		return this.delegate.getContext();
	}

	@Override
	public ContextView getContextView() {
		return this.delegate.getContextView();
	}

	@Override
	public ObservationRegistry getObservationRegistry() {
		return this.delegate.getObservationRegistry();
	}

	@Override
	public @Nullable Scope getEnclosingScope() {
		return this.delegate.getEnclosingScope();
	}

	@Override
	public Scope openScope() {
		return this.delegate.openScope();
	}

	@Override
	public String toString() {
		return this.delegate.toString();
	}

}

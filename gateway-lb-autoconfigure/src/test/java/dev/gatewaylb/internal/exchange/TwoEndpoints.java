package dev.gatewaylb.internal.exchange;

import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.TestRuntimes;

/**
 * A service {@code svc} of two endpoints, a and b, with its runtime started, and the
 * leases and attempts the filter package's tests make on it. Close it.
 */
final class TwoEndpoints implements AutoCloseable {

	final TestRuntimes fixture;

	final ServiceRuntime runtime;

	final Snapshot<Member> snapshot;

	TwoEndpoints() {
		this(Map.of());
	}

	/**
	 * The service with these {@code gateway.lb} properties.
	 */
	TwoEndpoints(Map<String, Object> properties) {
		this.fixture = new TestRuntimes(properties);
		this.fixture.instances.addAll(List.of(TestRuntimes.instance("a", 1), TestRuntimes.instance("b", 1)));
		this.runtime = this.fixture.runtime("svc");
		this.snapshot = this.runtime.snapshot();
	}

	ExchangeLease lease() {
		return new ExchangeLease();
	}

	/**
	 * Returns the first attempt of an exchange at endpoint {@code index}, claimed in
	 * flight, as the exchange's owner makes it.
	 */
	Attempt attempt(ExchangeLease lease, int index) {
		return new Attempt(this.snapshot.claim(index), this.snapshot.ewmaDecayNanos(), this.runtime,
				this.snapshot.value(index), lease, false, 0, null, -1, false);
	}

	@Override
	public void close() {
		this.fixture.close();
	}

}

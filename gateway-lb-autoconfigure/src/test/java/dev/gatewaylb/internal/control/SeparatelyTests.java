package dev.gatewaylb.internal.control;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SeparatelyTests {

	private final Separately separately = new Separately("latency-ejection");

	@Test
	void anItemThatThrowsAnythingStopsNoneOfTheItemsAfterIt() {
		List<String> ran = new ArrayList<>();
		Set<String> broken = Set.of("b", "d");
		this.separately.forEach(List.of("a", "b", "c", "d", "e"), (item) -> item, (item) -> {
			if (item.equals("b")) {
				throw new IllegalStateException("expected by the test");
			}
			if (item.equals("d")) {
				throw new StackOverflowError("expected by the test");
			}
			ran.add(item);
		});
		assertThat(ran).containsExactly("a", "c", "e");
		assertThat(broken).allMatch(this.separately::isFailing);
		assertThat(this.separately.isFailing("a")).isFalse();
	}

	@Test
	void anItemThatWorksAgainIsNoLongerFailing() {
		this.separately.forEach(List.of("svc"), (item) -> item, (item) -> {
			throw new IllegalStateException("expected by the test");
		});
		assertThat(this.separately.isFailing("svc")).isTrue();
		this.separately.forEach(List.of("svc"), (item) -> item, (item) -> {
		});
		assertThat(this.separately.isFailing("svc")).isFalse();
	}

}

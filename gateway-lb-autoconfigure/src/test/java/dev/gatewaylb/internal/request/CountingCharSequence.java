package dev.gatewaylb.internal.request;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link CharSequence} that counts the characters read from it, so that a test asserts
 * a parser's running time as a number of reads instead of a wall-clock time that varies
 * from machine to machine. Every way of reading is counted: {@link #charAt(int)} one
 * read, {@link #subSequence(int, int)} and {@link #toString()} one per character copied.
 * {@link #length()} is free, as it is for a {@link String}.
 */
final class CountingCharSequence implements CharSequence {

	private final String text;

	private long reads;

	CountingCharSequence(String text) {
		this.text = text;
	}

	static List<CountingCharSequence> of(List<String> lines) {
		List<CountingCharSequence> counting = new ArrayList<>(lines.size());
		for (String line : lines) {
			counting.add(new CountingCharSequence(line));
		}
		return counting;
	}

	static long reads(List<CountingCharSequence> lines) {
		long reads = 0;
		for (CountingCharSequence line : lines) {
			reads += line.reads;
		}
		return reads;
	}

	static long length(List<CountingCharSequence> lines) {
		long length = 0;
		for (CountingCharSequence line : lines) {
			length += line.length();
		}
		return length;
	}

	String text() {
		return this.text;
	}

	long reads() {
		return this.reads;
	}

	@Override
	public int length() {
		return this.text.length();
	}

	@Override
	public char charAt(int index) {
		this.reads++;
		return this.text.charAt(index);
	}

	@Override
	public CharSequence subSequence(int start, int end) {
		this.reads += Math.max(0, end - start);
		return this.text.substring(start, end);
	}

	@Override
	public String toString() {
		this.reads += this.text.length();
		return this.text;
	}

}

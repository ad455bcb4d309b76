package dev.quiver.ipc;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.TestData;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A struct or union whose children share a name: Arrow Java's vector keeps one of them, so loading
 * the batch would hand later columns the wrong nodes and buffers (the fuzz finding leaked 128 bytes
 * that way). The strict reader refuses such a schema before any batch is loaded.
 */
@Tag("bad-input")
class IpcStructChildNamesTest extends AllocatorTestBase {

  private static final String FINDING =
      "/dev/quiver/fuzz/IpcDecodeFuzzTestInputs/uncompressedStream/finding-map-entries-realloc-leak";

  private static Field field(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.nullable(type), Arrays.asList(children));
  }

  @Test
  void structWithTwoChildrenOfOneNameIsRefusedNamingTheColumn() throws IOException {
    Field struct =
        field(
            "s",
            ArrowType.Struct.INSTANCE,
            field("x", new ArrowType.Int(32, true)),
            field("x", ArrowType.Utf8.INSTANCE));
    byte[] stream =
        new HostileBatch(allocator, struct, 1)
            .node(1, 0).node(1, 0).node(1, 0).emptyBuffer().intColumn(5).utf8Column("a").stream();
    assertRefused(stream, "struct", "column s has two children named x");
  }

  @Test
  void mapWhoseEntriesRepeatANameIsRefusedNamingTheEntries() throws IOException {
    Field map =
        TestData.mapField(
            "m",
            new Field("k", FieldType.notNullable(ArrowType.Utf8.INSTANCE), List.of()),
            field("k", new ArrowType.Int(32, true)));
    byte[] stream =
        new HostileBatch(allocator, map, 1)
                .node(1, 0)
                .node(1, 0)
                .node(1, 0)
                .node(1, 0)
                .emptyBuffer()
                .intBuffer(0, 1)
                .emptyBuffer()
                .utf8Column("a")
                .intColumn(5)
                .stream();
    assertRefused(stream, "map", "column entries has two children named k");
  }

  @Test
  void unionWithTwoChildrenOfOneNameIsRefusedNamingTheColumn() throws IOException {
    Field union =
        field(
            "u",
            new ArrowType.Union(UnionMode.Sparse, new int[] {0, 1}),
            field("a", new ArrowType.Int(32, true)),
            field("a", ArrowType.Utf8.INSTANCE));
    byte[] stream =
        new HostileBatch(allocator, union, 1)
                .node(1, 0)
                .node(1, 0)
                .node(1, 0)
                .buffer(new byte[] {0})
                .intColumn(5)
                .utf8Column("a")
                .stream();
    assertRefused(stream, "union", "column u has two children named a");
  }

  /** The fuzz input (a selector byte, then an uncompressed Comet broadcast stream, mutated). */
  @Test
  void fuzzFindingIsRefusedWithoutLeaking() throws IOException {
    byte[] input;
    try (InputStream in = getClass().getResourceAsStream(FINDING)) {
      input = in.readAllBytes();
    }
    byte[] stream = Arrays.copyOfRange(input, 1, input.length);
    assertRefused(stream, "finding", "has two children named x");
  }

  private void assertRefused(byte[] stream, String source, String says) {
    IpcTestSupport.assertRefused(stream, StreamCodec.NONE, allocator, source, says);
  }
}

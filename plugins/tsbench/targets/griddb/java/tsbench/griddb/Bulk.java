package tsbench.griddb;

import com.toshiba.mwcloud.gs.AggregationResult;
import com.toshiba.mwcloud.gs.ColumnInfo;
import com.toshiba.mwcloud.gs.Container;
import com.toshiba.mwcloud.gs.ContainerInfo;
import com.toshiba.mwcloud.gs.GSException;
import com.toshiba.mwcloud.gs.GSType;
import com.toshiba.mwcloud.gs.GridStore;
import com.toshiba.mwcloud.gs.Query;
import com.toshiba.mwcloud.gs.Row;
import com.toshiba.mwcloud.gs.RowSet;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Column arrays to GridDB rows and back, so that the Python side (tsbench, over JPype) never moves
 * single cells across the language boundary. Part of tsbench; compiled by
 * targets/griddb/install_client.sh against the official Java client (com.github.griddb:gridstore).
 *
 * <p>Layout of every measurement container: column 0 is the TIMESTAMP row key (milliseconds since
 * the epoch), the other columns are LONG, DOUBLE or STRING.
 */
public final class Bulk {
    /** Kinds of a non-key column in {@link Columns#kinds}. */
    public static final int LONG = 0;
    public static final int DOUBLE = 1;
    public static final int STRING = 2;

    private Bulk() {}

    /**
     * Rows for {@link GridStore#multiPut}: rows {@code offsets[i]} (inclusive) to {@code offsets[i + 1]}
     * (exclusive) go to {@code containers[i]}. For non-key column {@code k} (schema column k + 1),
     * {@code values[k]} is a {@code long[]}, a {@code double[]} or, for STRING, a {@code String[]}
     * dictionary indexed by {@code codes[k]}; {@code nulls[k]} is null (no nulls) or true where the
     * value is null.
     */
    public static Map<String, List<Row>> rows(
            GridStore store,
            ContainerInfo schema,
            String[] containers,
            int[] offsets,
            long[] millis,
            Object[] values,
            int[][] codes,
            boolean[][] nulls)
            throws GSException {
        int columns = schema.getColumnCount() - 1;
        if (values.length != columns || codes.length != columns || nulls.length != columns) {
            throw new IllegalArgumentException(
                    "expected " + columns + " value columns for " + schema.getName() + ", got " + values.length);
        }
        if (offsets.length != containers.length + 1 || offsets[containers.length] != millis.length) {
            throw new IllegalArgumentException("offsets do not cover the " + millis.length + " rows");
        }
        Row template = store.createRow(schema);
        Map<String, List<Row>> byContainer = new LinkedHashMap<>();
        for (int c = 0; c < containers.length; c++) {
            List<Row> rows = new ArrayList<>(offsets[c + 1] - offsets[c]);
            for (int r = offsets[c]; r < offsets[c + 1]; r++) {
                Row row = template.createRow();
                row.setTimestamp(0, new Date(millis[r]));
                for (int k = 0; k < columns; k++) {
                    setValue(row, k + 1, values[k], codes[k], nulls[k], r);
                }
                rows.add(row);
            }
            if (byContainer.put(containers[c], rows) != null) {
                throw new IllegalArgumentException("container " + containers[c] + " appears twice");
            }
        }
        return byContainer;
    }

    private static void setValue(Row row, int column, Object values, int[] codes, boolean[] nulls, int r)
            throws GSException {
        if (nulls != null && nulls[r]) {
            row.setNull(column);
        } else if (values instanceof long[]) {
            row.setLong(column, ((long[]) values)[r]);
        } else if (values instanceof double[]) {
            row.setDouble(column, ((double[]) values)[r]);
        } else if (values instanceof String[] && codes != null) {
            row.setString(column, ((String[]) values)[codes[r]]);
        } else {
            throw new IllegalArgumentException("unsupported values for column " + column + ": " + values);
        }
    }

    /**
     * Rows of an all-STRING container (such as the entity tags collection): {@code columns[k][r]} is
     * the value of schema column k in row r.
     */
    public static List<Row> stringRows(GridStore store, ContainerInfo schema, String[][] columns)
            throws GSException {
        if (columns.length != schema.getColumnCount()) {
            throw new IllegalArgumentException(
                    "expected " + schema.getColumnCount() + " columns for " + schema.getName());
        }
        int count = columns.length == 0 ? 0 : columns[0].length;
        Row template = store.createRow(schema);
        List<Row> rows = new ArrayList<>(count);
        for (int r = 0; r < count; r++) {
            Row row = template.createRow();
            for (int k = 0; k < columns.length; k++) {
                row.setString(k, columns[k][r]);
            }
            rows.add(row);
        }
        return rows;
    }

    /** Rows as columns (the inverse of {@link #rows}): see {@link Columns}. */
    public static Columns columns(ContainerInfo schema, List<Row> rows) throws GSException {
        int count = rows.size();
        int columns = schema.getColumnCount() - 1;
        Columns out = new Columns(count, columns);
        for (int k = 0; k < columns; k++) {
            ColumnInfo info = schema.getColumnInfo(k + 1);
            out.names[k] = info.getName();
            GSType type = info.getType();
            if (type == GSType.DOUBLE || type == GSType.FLOAT) {
                out.kinds[k] = DOUBLE;
                out.values[k] = new double[count];
            } else if (type == GSType.STRING) {
                out.kinds[k] = STRING;
                out.values[k] = new String[count];
            } else {
                out.kinds[k] = LONG;
                out.values[k] = new long[count];
            }
            out.nulls[k] = new boolean[count];
        }
        for (int r = 0; r < count; r++) {
            Row row = rows.get(r);
            out.millis[r] = row.getTimestamp(0).getTime();
            for (int k = 0; k < columns; k++) {
                int column = k + 1;
                if (row.isNull(column)) {
                    out.nulls[k][r] = true;
                } else if (out.kinds[k] == DOUBLE) {
                    ((double[]) out.values[k])[r] = row.getDouble(column);
                } else if (out.kinds[k] == STRING) {
                    ((String[]) out.values[k])[r] = row.getString(column);
                } else {
                    ((long[]) out.values[k])[r] = row.getLong(column);
                }
            }
        }
        return out;
    }

    /**
     * Runs {@code tqls[i]} on container {@code containers[i]} for every i with one {@link
     * GridStore#fetchAll} (GridDB groups the queries into as few requests as it can). Missing
     * containers yield no rows and are flagged.
     */
    public static Fetched fetch(GridStore store, String[] containers, String[] tqls) throws GSException {
        int n = containers.length;
        Fetched out = new Fetched(n);
        List<Container<Object, Row>> opened = new ArrayList<>();
        List<Query<Object>> queries = new ArrayList<>();
        int[] position = new int[n];
        try {
            for (int q = 0; q < n; q++) {
                Container<Object, Row> container = store.getContainer(containers[q]);
                if (container == null) {
                    out.missing[q] = true;
                    position[q] = -1;
                    continue;
                }
                opened.add(container);
                position[q] = queries.size();
                queries.add(container.query(tqls[q], null));
            }
            if (!queries.isEmpty()) {
                store.fetchAll(queries);
            }
            List<Row> rows = new ArrayList<>();
            ContainerInfo schema = null;
            for (int q = 0; q < n; q++) {
                if (position[q] < 0) {
                    continue;
                }
                RowSet<Object> set = queries.get(position[q]).getRowSet();
                while (set.hasNext()) {
                    Object item = set.next();
                    if (item instanceof AggregationResult) {
                        AggregationResult result = (AggregationResult) item;
                        out.longs[q] = quietLong(result);
                        out.doubles[q] = quietDouble(result);
                    } else {
                        if (schema == null) {
                            schema = set.getSchema();
                        }
                        rows.add((Row) item);
                        out.counts[q]++;
                    }
                }
            }
            if (schema != null) {
                out.rows = columns(schema, rows);
            }
            return out;
        } finally {
            for (Container<Object, Row> container : opened) {
                try {
                    container.close();
                } catch (GSException ignored) {
                    // closing releases client resources only; the first error (if any) is the one thrown
                }
            }
        }
    }

    private static Long quietLong(AggregationResult result) {
        try {
            return result.getLong();
        } catch (RuntimeException error) {
            return null;
        }
    }

    private static Double quietDouble(AggregationResult result) {
        try {
            return result.getDouble();
        } catch (RuntimeException error) {
            return null;
        }
    }

    /** Rows as columns: row-key instants in {@code millis}; per non-key column its name, kind, values
     * ({@code long[]}, {@code double[]} or {@code String[]}) and null flags. */
    public static final class Columns {
        public final long[] millis;
        public final String[] names;
        public final int[] kinds;
        public final Object[] values;
        public final boolean[][] nulls;

        Columns(int rows, int columns) {
            millis = new long[rows];
            names = new String[columns];
            kinds = new int[columns];
            values = new Object[columns];
            nulls = new boolean[columns][];
        }
    }

    /** What {@link #fetch} returns: per query its row count (rows are concatenated in query order in
     * {@code rows}, null when no query returned rows), its aggregate (as long and as double where the
     * value converts; null when the query returned none) and whether its container was missing. */
    public static final class Fetched {
        public final int[] counts;
        public final Long[] longs;
        public final Double[] doubles;
        public final boolean[] missing;
        public Columns rows;

        Fetched(int queries) {
            counts = new int[queries];
            longs = new Long[queries];
            doubles = new Double[queries];
            missing = new boolean[queries];
        }
    }
}
